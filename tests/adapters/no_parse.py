"""A test adapter that forgot to define parse."""

NAME = "no-parse"

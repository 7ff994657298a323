// A Node adapter whose parser leaves a timer behind that throws after the reply.
import { serve } from '../../../adapters/node/protocol.mjs';

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function parse(response) {
  for await (const _ of response.body);
  await pause(150); // long enough for the previous case's timer to fire meanwhile
  setTimeout(() => {
    throw new Error(`late failure of ${response.caseId}`);
  }, 50);
  return { status: 'complete', choices: [] };
}

serve({ name: 'late-throw', version: '1', capabilities: ['content'], parse });

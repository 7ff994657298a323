// A Node adapter whose parser throws while the module loads.
import { serve } from '../../../adapters/node/protocol.mjs';

throw new Error('cannot load the parser: missing grammar file');

serve({ name: 'never', version: '0', capabilities: [], parse: async () => ({}) });

// `npm install` (prepare): builds build/pglite-template, the empty embedded database a first start copies.
import { createTemplate, TEMPLATE_DIR } from '../src/db/pglite-template.js';

const started = Date.now();
await createTemplate();
console.log(`embedded database template ready in ${TEMPLATE_DIR} (${Date.now() - started} ms)`);

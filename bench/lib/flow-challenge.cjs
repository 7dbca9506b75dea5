// autocannon onResponse for the memory scenario's mixed flow (bench/lib/memory.ts): keeps the
// challenge just fetched in the connection's context for the verify request that follows.
'use strict';
module.exports = function onChallenge(status, body, context) {
  context.challenge = status === 200 ? body : null;
};

// autocannon setupRequest for the memory scenario's mixed flow: solves the challenge the previous
// request fetched (SHA-x, the "narrow" key's counter range 0–100, so at most ~100 hashes) and posts
// the widget's payload, as a browser would. Returning null when there is no challenge makes
// autocannon start the connection's sequence over.
'use strict';
const { createHash } = require('node:crypto');

const DIGESTS = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };
const MAX_COUNTER = 100000;

function solve(json) {
  const { parameters, signature } = JSON.parse(json);
  const digest = DIGESTS[parameters.algorithm];
  if (digest === undefined) throw new Error(`the mixed flow solves SHA-x only, not ${parameters.algorithm}`);
  const keyLength = parameters.keyLength || 32;
  const salt = Buffer.from(parameters.salt, 'hex');
  const password = Buffer.alloc(parameters.nonce.length / 2 + 4);
  password.write(parameters.nonce, 0, 'hex');
  const prefix = parameters.keyPrefix;
  for (let counter = 0; counter <= MAX_COUNTER; counter++) {
    password.writeUInt32BE(counter, password.length - 4);
    let key = createHash(digest).update(salt).update(password).digest();
    for (let i = 1; i < parameters.cost; i++) key = createHash(digest).update(key).digest();
    const hex = key.subarray(0, keyLength).toString('hex');
    if (hex.startsWith(prefix)) {
      const payload = { challenge: { parameters, signature }, solution: { counter, derivedKey: hex, time: 1 } };
      return Buffer.from(JSON.stringify(payload)).toString('base64');
    }
  }
  throw new Error('no solution in the counter range');
}

module.exports = function setupVerify(request, context) {
  if (!context.challenge) return null;
  request.body = `{"payload":"${solve(context.challenge)}"}`;
  context.challenge = null;
  return request;
};

// autocannon setupRequest for the sustained scenario's rotation flood (bench/lib/sustained.ts): every
// request comes from an IPv6 /64 of its own, as an attacker rotating through a /32 would send them,
// named in X-Forwarded-For (the service trusts the loopback proxy in that run).
'use strict';
const { threadId } = require('node:worker_threads');

let n = 0;

module.exports = function rotate(request) {
  const i = n++;
  request.headers = {
    ...request.headers,
    'x-forwarded-for': `2001:${(0xd00 + (threadId & 0xff)).toString(16)}:${((i >>> 16) & 0xffff).toString(16)}:${(i & 0xffff).toString(16)}::1`,
  };
  return request;
};

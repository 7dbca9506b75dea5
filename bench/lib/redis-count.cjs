// Preloaded into the Palisade processes of the S3n scenario (NODE_OPTIONS=--require, bench/lib/nodes.ts):
// counts what each process sends to Redis, which Redis itself cannot tell apart. INFO commandstats
// counts the commands a Lua script runs as well as the EVALSHA that ran it, so the requests a node
// sends (one EVALSHA for a turn's claims, however many) and the event-loop turns in which it sent
// anything (the batches of src/store/redis-batch.ts go out together, so their replies are awaited
// together: one round trip) are counted here, on the client side, in ioredis's sendCommand.
//
// Every 100 ms, when something changed, the counts go to BENCH_REDIS_COUNT_DIR/<pid>.json (written
// to a temporary name, then renamed: the runner never reads half a file). The runner reads them
// while the nodes are idle, before and after a load run, so the interval loses nothing.
'use strict';
const { createHash } = require('node:crypto');
const { renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.BENCH_REDIS_COUNT_DIR;
if (dir) install(dir);

function install(dir) {
  const Redis = require('ioredis');
  /** Command name (a script's name for EVALSHA) → requests sent. */
  const commands = Object.create(null);
  /** Event-loop turns in which this process sent at least one request other than INFO. */
  let turns = 0;
  let inTurn = false;
  let changed = false;
  /** SHA-1 of a defined script's Lua → its name (palisadeClaims, palisadeHits, …). */
  const scripts = new Map();

  const defineCommand = Redis.prototype.defineCommand;
  Redis.prototype.defineCommand = function (name, definition) {
    scripts.set(createHash('sha1').update(definition.lua).digest('hex'), name);
    return defineCommand.call(this, name, definition);
  };
  const endTurn = () => { inTurn = false; };
  const sendCommand = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (command, stream) {
    // A defined script is always sent as EVALSHA (ioredis turns the first one on a connection into EVAL when written).
    const name = command.name === 'evalsha' ? scripts.get(String(command.args[0])) ?? 'evalsha' : command.name;
    commands[name] = (commands[name] ?? 0) + 1;
    // INFO memory goes out once a second from every process whatever the load (src/store/redis-memory.ts).
    if (name !== 'info' && !inTurn) {
      inTurn = true;
      turns++;
      setImmediate(endTurn);
    }
    changed = true;
    return sendCommand.call(this, command, stream);
  };

  const file = join(dir, `${process.pid}.json`);
  const temporary = `${file}.tmp`;
  const write = () => {
    if (!changed) return;
    changed = false;
    writeFileSync(temporary, JSON.stringify({ pid: process.pid, commands, turns }));
    renameSync(temporary, file);
  };
  setInterval(write, 100).unref();
}

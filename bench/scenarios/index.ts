// Every scenario, in run order.
import type { Scenario } from './scenario.js';
import { S0 } from './s0-http-layer.js';
import { S1 } from './s1-challenge.js';
import { S2 } from './s2-verify.js';
import { S2c } from './s2c-verify-fields.js';
import { S3 } from './s3-verify-redis.js';
import { S4 } from './s4-challenge-pbkdf2.js';
import { S5 } from './s5-inspect.js';
import { S6 } from './s6-classifier.js';

export const SCENARIOS: readonly Scenario[] = [S0, S1, S2, S2c, S3, S4, S5, S6];

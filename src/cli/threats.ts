// `threats status`: each threat source, its kind, URL (without credentials), entries, last update,
// next run and last error (docs/threats.md).
import type { Config } from '../config/index.js';
import { threatsStatus } from '../intel/threats-status.js';

export function threatsStatusCommand(config: Config, json: boolean): number {
  const report = threatsStatus(config);
  console.log(json ? JSON.stringify(report.data) : report.text);
  return 0;
}

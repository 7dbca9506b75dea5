// The IP intelligence of one serving process, loaded before it serves: the geolocation databases
// (downloaded ones from DATA_DIR/lists, then the embedded country database), the embedded ASN index
// (built in a worker thread after start; until it is ready lookups have no ASN unless a database
// gives one) and the user-agent list. reload(name) follows the primary's 'list-updated' messages.
import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import { listPaths } from '../lists/list-store.js';
import { embeddedAsnFiles, loadAsnIndex, type AsnIndex } from './asn-index.js';
import { createGeo, embeddedCountryDatabase } from './geo.js';
import { geoDatabaseFiles } from './intel-lists.js';
import { createIntel, type Intel } from './intel.js';
import type { ThreatIndex } from './threat-index.js';
import { loadUserAgentList, UserAgentList } from './user-agent-list.js';

export interface Intelligence {
  readonly intel: Intel;
  /** Resolves when the embedded ASN index is built (at once when GEO_EMBEDDED_ASN=0). */
  readonly asnReady: Promise<void>;
  reload(name: string): Promise<void>;
}

export async function startIntelligence(config: Config, logger: Logger, threats: ThreatIndex | null): Promise<Intelligence> {
  let asn: AsnIndex | null = null;
  const geo = createGeo({
    databases: [...geoDatabaseFiles(config, config.dataDir), { name: 'embedded', path: embeddedCountryDatabase() }],
    logger,
    asn: () => asn,
  });
  let userAgents = UserAgentList.EMPTY;
  const uaPath = listPaths(config.dataDir, 'user_agents').file;
  const loadUserAgents = async () => {
    try {
      userAgents = await loadUserAgentList(uaPath);
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'loading the user-agent list failed; the one loaded before stays in use');
    }
  };
  await Promise.all([geo.reloadAll(), config.USER_AGENT_LIST_URL ? loadUserAgents() : undefined]);
  const asnReady = config.GEO_EMBEDDED_ASN
    ? loadAsnIndex(embeddedAsnFiles()).then((index) => { asn = index; }, (err: Error) => {
      logger.error({ err: err.message }, 'building the embedded ASN index failed; ASNs come only from downloaded databases');
    })
    : Promise.resolve();
  const intel = createIntel({
    geo, threats, userAgents: () => userAgents,
    highRiskCountries: config.HIGH_RISK_COUNTRIES, ipHeadersSecret: config.IP_HEADERS_SECRET,
  });
  return {
    intel,
    asnReady,
    async reload(name) {
      if (name === 'user_agents') await loadUserAgents();
      else await geo.reload(name);
    },
  };
}

// POST /v1/eml (server-side, API-key authorised; docs/eml.md): a raw RFC 5322 message in, its parse,
// its SPF/DKIM/DMARC/ARC results when X-Authenticate asks, and its classification out. The body is
// read within EML_BODY_LIMIT by the HTTP layer (413 BODY_TOO_LARGE past it, nothing kept).
import { randomBytes } from 'node:crypto';
import { RULE_NAMES } from '../classifier/classify.js';
import type { AttachmentStore } from '../classifier/eml/attachment-store.js';
import type { Authenticator } from '../classifier/eml/authenticate.js';
import { classifyMessage, messageTexts, type MessageClassification } from '../classifier/eml/classify-message.js';
import { parseEmlOptions } from '../classifier/eml/options.js';
import { parseMessage, type ParsedMessage } from '../classifier/eml/parse-message.js';
import { senderFromReceived } from '../classifier/eml/received.js';
import type { CountryLists } from '../classifier/network-rules.js';
import { KeyPolicies } from '../classifier/key-policies.js';
import { PalisadeError } from '../errors.js';
import type { Handler, RequestContext, Reply } from '../http/types.js';
import type { ClassifierRouteDeps } from './classifier.js';
import { json } from '../http/types.js';
import { anonymizeIp } from '../ip.js';
import type { CidrList } from '../parse.js';

/** What /v1/classifier needs (authorisation, usage, intelligence), and the message's own services. */
export interface EmlRouteDeps extends ClassifierRouteDeps {
  readonly authenticator: Authenticator;
  /** Where X-Attachments-Upload stores; null when STORAGE_PROVIDER has no implementation. */
  readonly attachments: AttachmentStore | null;
  /** Relays besides private addresses whose Received fields are believed (EML_TRUSTED_RELAYS). */
  readonly trustedRelays: CidrList;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
/** Types that cannot be a raw message: a form upload or JSON is a client mistake worth naming. */
const REFUSED_TYPES = /^\s*(?:application\/json|multipart\/form-data)\b/i;

export function emlRoute(deps: EmlRouteDeps): Handler {
  const policies = new KeyPolicies();
  return async (req: RequestContext): Promise<Reply> => {
    const key = await deps.authorize(req);
    const type = req.headers['content-type'];
    if (type !== undefined && REFUSED_TYPES.test(type)) {
      throw new PalisadeError('UNSUPPORTED_MEDIA_TYPE', 'The body must be the raw message (application/octet-stream or message/rfc822).');
    }
    const options = parseEmlOptions(req.headers, RULE_NAMES);
    if (options.attachmentsUpload && deps.attachments === null) {
      throw new PalisadeError('INVALID_PARAMETER', 'X-Attachments-Upload needs STORAGE_PROVIDER=local (the only storage implemented)');
    }
    const raw = req.body;
    if (raw === null || raw.length === 0) throw new PalisadeError('INVALID_PARAMETER', 'The body must be an RFC 5322 message.');
    const message = await parseMessage(raw, { attachmentLimit: options.attachmentsSizeLimit, nonce: randomBytes(9).toString('base64url') });
    const received = message.headers.filter((h) => h.key === 'received').map((h) => h.value);
    const sender = senderFromReceived(received, deps.trustedRelays);
    const authentication = options.authenticate ? await deps.authenticator.authenticate(raw, sender) : null;

    const policy = policies.classification(key);
    const keyCountries = policies.countries(key);
    const countries: CountryLists = { expected: keyCountries?.expected ?? null, blocked: keyCountries?.blocked ?? null };
    let disabled = options.disableRules;
    if (policy.disableRules.size > 0) disabled = new Set([...disabled, ...policy.disableRules]);
    const texts = messageTexts(message);
    const training = texts.some((t) => t.length > 0) ? await deps.classifier.training.index(key.accountId) : null;
    const classification = await classifyMessage(message, authentication, {
      expectedLanguages: policy.expectedLanguages,
      ip: sender.ip === null ? null : deps.intel.signals(sender.ip, NO_HEADERS),
      penalty: sender.ip === null ? 0 : await deps.penalty(sender.ip),
      countries, similarity: training, disabled, bands: policy.bands.mail,
    }, deps.classifier.deps);

    deps.countUsage(req, key, classification.classification, null);
    if (classification.classification === 'BAD') {
      deps.classifier.keep({
        accountId: key.accountId, apiKeyId: key.id, source: 'eml', texts, fieldNames: [], result: classification,
        ip: sender.ip === null ? null : deps.anonymizeIp ? anonymizeIp(sender.ip) : sender.ip,
      });
    }
    const attachments = await attachmentsOut(message, options.attachmentsUpload ? deps.attachments : null);
    return json(response(message, attachments, sender.ip, authentication, classification), 200, { 'cache-control': 'no-store' });
  };
}

interface AttachmentOut {
  readonly filename: string | null;
  readonly contentType: string;
  readonly disposition: string | null;
  readonly contentId: string | null;
  readonly size: number;
  readonly sha256: string | null;
  /** Base64 of the bytes; null when uploaded or omitted. */
  readonly content: string | null;
  /** Where the bytes were stored (X-Attachments-Upload); null otherwise. */
  readonly contentUri: string | null;
  readonly omitted: 'SIZE_LIMIT' | null;
}

async function attachmentsOut(m: ParsedMessage, store: AttachmentStore | null): Promise<AttachmentOut[]> {
  const out: AttachmentOut[] = [];
  for (const a of m.attachments) {
    let content: string | null = null;
    let contentUri: string | null = null;
    if (a.bytes !== null && a.sha256 !== null) {
      if (store !== null) contentUri = await store.save(a.bytes, a.sha256);
      else content = Buffer.from(a.bytes.buffer, a.bytes.byteOffset, a.bytes.byteLength).toString('base64');
    }
    out.push({
      filename: a.filename, contentType: a.contentType, disposition: a.disposition, contentId: a.contentId, size: a.size, sha256: a.sha256,
      content, contentUri, omitted: a.omitted,
    });
  }
  return out;
}

function response(
  m: ParsedMessage, attachments: AttachmentOut[], senderIp: string | null, authentication: unknown, classification: MessageClassification,
): Record<string, unknown> {
  return {
    from: m.from, sender: m.sender, to: m.to, cc: m.cc, replyTo: m.replyTo, returnPath: m.returnPath, subject: m.subject, date: m.date,
    messageId: m.messageId, inReplyTo: m.inReplyTo, headers: m.headers, text: m.text, html: m.html, htmlText: m.htmlText, attachments,
    senderIp, limit: m.limit, authentication, classification,
  };
}

// API keys: the list, create (the secret is shown once, with a copy button and a widget snippet),
// edit (name, hostnames, rate limit, challenge policy), rotate and revoke with confirmation. Write
// buttons show only for the account's admins and root.
import { useEffect, useState } from 'preact/hooks';
import { type Account, api, BASE, can, type Key, type Me } from '../api.js';
import { Confirm, CopyButton, ErrorLine, Modal, when } from '../ui.js';

const hostList = (text: string) => text.split(/[\s,]+/).map((h) => h.trim()).filter((h) => h !== '');

function Secret({ keyRecord, rotated }: { keyRecord: Key; rotated?: boolean }) {
  const challenge = `${location.origin}${BASE}/v1/challenge?apiKey=${keyRecord.id}`;
  const snippet = `<script async defer src="https://cdn.jsdelivr.net/npm/altcha/dist/altcha.min.js" type="module"></script>\n<form method="post" action="/submit">\n  <altcha-widget challenge="${challenge}"></altcha-widget>\n  <button>Send</button>\n</form>`;
  return (
    <div class="secret">
      <p><strong>{rotated ? 'The new secret' : 'The secret'} is shown only this once.</strong> Store it now: your backend signs and verifies with it.</p>
      <label>API key<input readOnly value={keyRecord.id} data-field="key-id" /></label>
      <div class="row"><label class="grow">Secret<input readOnly value={keyRecord.secret} data-field="secret" /></label><CopyButton text={keyRecord.secret!} label="Copy secret" /></div>
      <label>Widget snippet<textarea readOnly rows={6} value={snippet} data-field="snippet" /></label>
      <CopyButton text={snippet} label="Copy snippet" />
    </div>
  );
}

function EditKey({ keyRecord, onSaved, onClose }: { keyRecord: Key; onSaved: () => void; onClose: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    let challengePolicy: unknown = null;
    const policy = String(f.get('policy')).trim();
    try {
      if (policy !== '') challengePolicy = JSON.parse(policy);
    } catch {
      return setError(new Error('The challenge policy must be JSON.'));
    }
    try {
      await api('PATCH', `/keys/${keyRecord.id}`, {
        name: String(f.get('name')), hostnames: hostList(String(f.get('hostnames'))), rateLimit: String(f.get('rateLimit')).trim() || null, challengePolicy,
      });
      onSaved();
      onClose();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Modal title={`Edit ${keyRecord.name || keyRecord.id}`} onClose={onClose}>
      <form onSubmit={submit} id="edit-key">
        <label>Name<input name="name" defaultValue={keyRecord.name} maxLength={200} /></label>
        <label>Hostnames (comma or space separated; none = any origin)<input name="hostnames" defaultValue={keyRecord.hostnames.join(', ')} /></label>
        <label>Rate limit (e.g. 100/1m(key=ip&amp;block=10m); empty = none)<input name="rateLimit" defaultValue={keyRecord.rateLimit ?? ''} /></label>
        <label>Challenge policy (JSON; empty = defaults)<textarea name="policy" rows={3} defaultValue={keyRecord.challengePolicy ? JSON.stringify(keyRecord.challengePolicy) : ''} /></label>
        <ErrorLine error={error} />
        <button class="primary" type="submit">Save</button>
      </form>
    </Modal>
  );
}

export function KeysPage({ me }: { me: Me }) {
  const [keys, setKeys] = useState<Key[]>([]);
  const [accounts, setAccounts] = useState<Account[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<{ key: Key; rotated: boolean } | null>(null);
  const [confirm, setConfirm] = useState<{ key: Key; action: 'revoke' | 'rotate' } | null>(null);
  const [editing, setEditing] = useState<Key | null>(null);
  const [showRevoked, setShowRevoked] = useState(false);
  const load = () => api<Key[]>('GET', '/keys').then(setKeys, setError);
  useEffect(() => { void load(); api<Account[]>('GET', '/accounts').then(setAccounts, setError); }, []);
  const user = me.user;
  const mayCreate = user.isRoot || can(user, 'manage', user.accountId);
  const accountName = (id: string) => accounts.find((a) => a.id === id)?.name ?? id;

  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    setError(null);
    try {
      const key = await api<Key>('POST', '/keys', {
        name: String(f.get('name')), hostnames: hostList(String(f.get('hostnames'))),
        ...(user.isRoot && f.get('accountId') ? { accountId: String(f.get('accountId')) } : {}),
      });
      form.reset();
      setCreated({ key, rotated: false });
      void load();
    } catch (err) {
      setError(err);
    }
  };
  const shown = keys.filter((k) => showRevoked || k.revokedAt === null);
  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      {mayCreate && (
        <form class="card" onSubmit={create} aria-labelledby="new-key-title">
          <h2 id="new-key-title">New key</h2>
          <div class="filters">
            <label>Name<input name="name" maxLength={200} placeholder="My site" /></label>
            <label>Hostnames<input name="hostnames" placeholder="example.com, *.example.org" /></label>
            {user.isRoot && (
              <label>Account
                <select name="accountId">
                  <option value="">Default account</option>
                  {accounts.filter((a) => !a.generated).map((a) => <option value={a.id} key={a.id}>{a.name}</option>)}
                </select>
              </label>
            )}
          </div>
          <button class="primary" type="submit">Create key</button>
        </form>
      )}
      <ErrorLine error={error} />
      <label class="inline"><input type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked((e.target as HTMLInputElement).checked)} /> Show revoked keys</label>
      <div class="table-wrap">
        <table>
          <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Account</th><th scope="col">Hostnames</th><th scope="col">Plan</th><th scope="col">Status</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>
            {shown.map((k) => {
              const manage = can(user, 'manage', k.accountId) && k.revokedAt === null;
              return (
                <tr key={k.id} data-key={k.id}>
                  <td>{k.name || '—'}</td>
                  <td><code>{k.id}</code></td>
                  <td>{accountName(k.accountId)}</td>
                  <td>{k.hostnames.join(', ') || 'any'}</td>
                  <td>{k.plan}</td>
                  <td>{k.revokedAt ? 'revoked' : k.enabled ? 'active' : 'suspended'}</td>
                  <td>{when(k.lastUsedAt)}</td>
                  <td class="actions">
                    {manage && <>
                      <button type="button" onClick={() => setEditing(k)}>Edit</button>
                      <button type="button" onClick={() => setConfirm({ key: k, action: 'rotate' })}>Rotate</button>
                      <button type="button" class="danger" onClick={() => setConfirm({ key: k, action: 'revoke' })}>Revoke</button>
                    </>}
                  </td>
                </tr>
              );
            })}
            {shown.length === 0 && <tr><td colSpan={8}>No keys yet.</td></tr>}
          </tbody>
        </table>
      </div>
      {created && <Modal title={created.rotated ? 'Key rotated' : 'Key created'} onClose={() => setCreated(null)}><Secret keyRecord={created.key} rotated={created.rotated} /></Modal>}
      {editing && <EditKey keyRecord={editing} onSaved={load} onClose={() => setEditing(null)} />}
      {confirm && (
        <Confirm
          title={confirm.action === 'revoke' ? `Revoke ${confirm.key.name || confirm.key.id}?` : `Rotate the secret of ${confirm.key.name || confirm.key.id}?`}
          confirmLabel={confirm.action === 'revoke' ? 'Revoke key' : 'Rotate secret'} danger={confirm.action === 'revoke'}
          onClose={() => setConfirm(null)}
          onConfirm={async () => {
            try {
              if (confirm.action === 'revoke') await api('POST', `/keys/${confirm.key.id}/revoke`);
              else setCreated({ key: await api<Key>('POST', `/keys/${confirm.key.id}/rotate`), rotated: true });
              void load();
            } catch (err) {
              setError(err);
            }
          }}>
          <p>{confirm.action === 'revoke'
            ? 'The key stops working within CACHE_DURATION_API_KEYS. Revocation cannot be undone.'
            : 'The current secret stops working within CACHE_DURATION_API_KEYS; the new one is shown once.'}</p>
        </Confirm>
      )}
    </section>
  );
}

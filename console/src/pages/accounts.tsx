// Accounts: create (root), rename (the account's admins and root), deactivate and activate (root).
import { useEffect, useState } from 'preact/hooks';
import { type Account, api, can, type Me } from '../api.js';
import { Confirm, ErrorLine, when } from '../ui.js';

export function AccountsPage({ me }: { me: Me }) {
  const [accounts, setAccounts] = useState<Account[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [confirm, setConfirm] = useState<Account | null>(null);
  const load = () => api<Account[]>('GET', '/accounts').then(setAccounts, setError);
  useEffect(() => { void load(); }, []);
  const user = me.user;
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try { await fn(); await load(); } catch (err) { setError(err); }
  };
  return (
    <section aria-labelledby="accounts-title">
      <h1 id="accounts-title">Accounts</h1>
      {user.isRoot && (
        <form class="card row" onSubmit={(e) => {
          e.preventDefault();
          const form = e.target as HTMLFormElement;
          void act(async () => { await api('POST', '/accounts', { name: String(new FormData(form).get('name')) }); form.reset(); });
        }}>
          <label class="grow">New account<input name="name" required maxLength={200} /></label>
          <button class="primary" type="submit">Create account</button>
        </form>
      )}
      <ErrorLine error={error} />
      <div class="table-wrap">
        <table>
          <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>{accounts.map((a) => (
            <tr key={a.id}>
              <td>{a.name}{a.isDefault ? ' (default)' : ''}{a.generated ? ' (generated key)' : ''}</td>
              <td><code>{a.id}</code></td>
              <td>{a.active ? 'active' : 'deactivated'}</td>
              <td>{when(a.createdAt)}</td>
              <td class="actions">
                {can(user, 'manage', a.id) && <button type="button" onClick={() => {
                  const name = prompt('New name', a.name);
                  if (name !== null && name.trim() !== '') void act(() => api('PATCH', `/accounts/${a.id}`, { name }));
                }}>Rename</button>}
                {user.isRoot && !a.isDefault && (a.active
                  ? <button type="button" class="danger" onClick={() => setConfirm(a)}>Deactivate</button>
                  : <button type="button" onClick={() => void act(() => api('PATCH', `/accounts/${a.id}`, { active: true }))}>Activate</button>)}
              </td>
            </tr>
          ))}</tbody>
        </table>
      </div>
      {confirm && (
        <Confirm title={`Deactivate ${confirm.name}?`} confirmLabel="Deactivate" danger onClose={() => setConfirm(null)}
          onConfirm={() => act(() => api('PATCH', `/accounts/${confirm.id}`, { active: false }))}>
          <p>Its keys stop working within CACHE_DURATION_API_KEYS and its users cannot log in until it is activated again.</p>
        </Confirm>
      )}
    </section>
  );
}

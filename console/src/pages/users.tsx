// Users: create with a temporary password (changed at first login), change role, disable, reset
// the password, delete. The account's admins manage its users; root manages everyone.
import { useEffect, useState } from 'preact/hooks';
import { type Account, api, can, type Me, type User } from '../api.js';
import { Confirm, ErrorLine, when } from '../ui.js';

export function UsersPage({ me }: { me: Me }) {
  const [users, setUsers] = useState<User[]>([]);
  const [accounts, setAccounts] = useState<Account[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [removing, setRemoving] = useState<User | null>(null);
  const load = () => api<User[]>('GET', '/users').then(setUsers, setError);
  useEffect(() => { void load(); api<Account[]>('GET', '/accounts').then(setAccounts, setError); }, []);
  const user = me.user;
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try { await fn(); await load(); } catch (err) { setError(err); }
  };
  const mayCreate = user.isRoot || can(user, 'manage', user.accountId);
  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      {mayCreate && (
        <form class="card" onSubmit={(e) => {
          e.preventDefault();
          const form = e.target as HTMLFormElement;
          const f = new FormData(form);
          void act(async () => {
            await api('POST', '/users', {
              username: String(f.get('username')), password: String(f.get('password')), role: String(f.get('role')),
              ...(user.isRoot ? { accountId: String(f.get('accountId')) } : {}),
            });
            form.reset();
          });
        }} aria-labelledby="new-user-title">
          <h2 id="new-user-title">New user</h2>
          <div class="filters">
            <label>Username<input name="username" required maxLength={64} autoComplete="off" /></label>
            <label>Temporary password<input name="password" type="password" required autoComplete="new-password" /></label>
            <label>Role<select name="role"><option>read-only</option><option>member</option><option>admin</option></select></label>
            {user.isRoot && <label>Account<select name="accountId" required>{accounts.filter((a) => !a.generated).map((a) => <option value={a.id} key={a.id}>{a.name}</option>)}</select></label>}
          </div>
          <button class="primary" type="submit">Create user</button>
        </form>
      )}
      <ErrorLine error={error} />
      <div class="table-wrap">
        <table>
          <thead><tr><th scope="col">Username</th><th scope="col">Role</th><th scope="col">Account</th><th scope="col">Two-factor</th><th scope="col">Last login</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>{users.map((u) => {
            const manage = !u.isRoot && u.id !== user.id && can(user, 'manage', u.accountId);
            return (
              <tr key={u.id}>
                <td>{u.username}{u.disabled ? ' (disabled)' : ''}{u.mustChangePassword ? ' (must change password)' : ''}</td>
                <td>{manage
                  ? <select aria-label={`Role of ${u.username}`} value={u.role} onChange={(e) => void act(() => api('PATCH', `/users/${u.id}`, { role: (e.target as HTMLSelectElement).value }))}>
                      <option>read-only</option><option>member</option><option>admin</option></select>
                  : u.role}</td>
                <td>{accounts.find((a) => a.id === u.accountId)?.name ?? (u.isRoot ? 'all' : u.accountId)}</td>
                <td>{u.totpEnabled ? 'on' : 'off'}</td>
                <td>{when(u.lastLoginAt)}</td>
                <td class="actions">{manage && <>
                  <button type="button" onClick={() => void act(() => api('PATCH', `/users/${u.id}`, { disabled: !u.disabled }))}>{u.disabled ? 'Enable' : 'Disable'}</button>
                  <button type="button" onClick={() => {
                    const password = prompt(`Temporary password for ${u.username} (to change at next login)`);
                    if (password) void act(() => api('POST', `/users/${u.id}/password`, { password }));
                  }}>Reset password</button>
                  <button type="button" class="danger" onClick={() => setRemoving(u)}>Delete</button>
                </>}</td>
              </tr>
            );
          })}</tbody>
        </table>
      </div>
      {removing && <Confirm title={`Delete ${removing.username}?`} confirmLabel="Delete user" danger onClose={() => setRemoving(null)}
        onConfirm={() => act(() => api('DELETE', `/users/${removing.id}`))} />}
    </section>
  );
}

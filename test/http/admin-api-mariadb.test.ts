// The admin API tests (admin-api.test.ts) on MariaDB (MARIADB_URL), a database of their own.
process.env['PALISADE_TEST_ENGINE'] = 'mariadb';
await import('./admin-api.test.js');

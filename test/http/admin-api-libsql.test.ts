// The admin API tests (admin-api.test.ts) on libSQL (LIBSQL_URL), a file of their own.
process.env['PALISADE_TEST_ENGINE'] = 'libsql';
await import('./admin-api.test.js');

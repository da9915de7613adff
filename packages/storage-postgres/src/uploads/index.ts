// `@stowage/storage-postgres/uploads`: `@stowage/uploads`' QuotaLedger on PostgreSQL, shared by
// every process on the database. Needs `@stowage/uploads` installed (an optional peer).
export { createPostgresQuotaLedger, type PostgresQuotaLedgerOptions } from "./quota-ledger.js";

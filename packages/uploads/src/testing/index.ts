// First: without vitest, the import fails naming this entry (see vitest-peer.ts).
import "./vitest-peer.js";

export {
  describeQuotaLedgerConformance,
  type QuotaLedgerConformanceOptions,
} from "./quota-ledger-conformance.js";

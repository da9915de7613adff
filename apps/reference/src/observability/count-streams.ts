import type { RateLimits } from "../http/rate-limit.js";
import type { AppMetrics } from "./metrics.js";

/**
 * `limits` whose live streams (a thread's SSE tail, an MCP notification stream: every route opens
 * one through `openStream`) are counted in `stowage_sse_subscribers` while they are open.
 */
export function countStreams(limits: RateLimits, metrics: AppMetrics): RateLimits {
  return {
    ...limits,
    openStream(keyId) {
      const release = limits.openStream(keyId);
      const closed = metrics.streamOpened();
      return () => {
        release();
        closed();
      };
    },
  };
}

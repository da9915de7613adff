import { envFlag, envPositiveInteger } from "@stowage/core";

/** The knobs of a run, from the environment (`LOAD_*`); the defaults are the issue's. */
export interface LoadSettings {
  /** `LOAD_SECONDS` (default 60): how long the agents run. */
  seconds: number;
  /** `LOAD_AGENTS` (default 50): simulated agents, each one session with its own loop. */
  agents: number;
  /** `LOAD_REPLICAS` (1 or 2, default 1): app processes on the same PostgreSQL and S3. */
  replicas: 1 | 2;
  /** `LOAD_CRASH` (default off): replica 0 is killed (SIGKILL) halfway and started again. */
  crash: boolean;
  /** `LOAD_PROFILE` (default off): the replicas run with `--cpu-prof`; the hottest functions are printed. */
  profile: boolean;
  /** `LOAD_THINK_MS` (default 0): pause between an agent's turns (0: every agent as fast as it is answered). */
  thinkMs: number;
  /** `LOAD_CONNECTIONS` (default 64): the bound of the client's connection pool to each replica. */
  connections: number;
}

/** Agents that share one principal (one API key), as a dispatcher's agents do (document 004). */
export const AGENTS_PER_PRINCIPAL = 10;

export function loadSettings(env: NodeJS.ProcessEnv = process.env): LoadSettings {
  const replicas = envPositiveInteger(env, "LOAD_REPLICAS") ?? 1;
  if (replicas !== 1 && replicas !== 2) throw new Error(`LOAD_REPLICAS must be 1 or 2, got ${replicas}`);
  return {
    seconds: envPositiveInteger(env, "LOAD_SECONDS") ?? 60,
    agents: envPositiveInteger(env, "LOAD_AGENTS") ?? 50,
    replicas,
    crash: envFlag(env, "LOAD_CRASH") ?? false,
    profile: envFlag(env, "LOAD_PROFILE") ?? false,
    thinkMs: Number(env.LOAD_THINK_MS ?? 0) || 0,
    connections: envPositiveInteger(env, "LOAD_CONNECTIONS") ?? 64,
  };
}

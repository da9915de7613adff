// `pnpm load`: the reference app on PostgreSQL and S3 (one or two replicas on 127.0.0.1), driven by
// LOAD_AGENTS simulated agents for LOAD_SECONDS, then every acknowledged write read back. The last
// line is `load: <total req/s> req/s, p99 <ms> ms, <errors> errors, <lost> lost`; the exit status is
// 1 when anything failed (a crash run, LOAD_CRASH=1, fails on a lost write only).
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSessionFiles } from "@stowage/artifacts";
import { type AgentState, agentTurn, newAgentState, setUpAgent, tailThread } from "./agent.js";
import { Api, streamDispatcher } from "./api.js";
import { issueKeys } from "./keys.js";
import { summarizeProfiles } from "./profile.js";
import { Recorder } from "./recorder.js";
import { type Replica, startReplica } from "./replicas.js";
import { operationTable, storeOperationTable } from "./report.js";
import { cpuBetween, serviceCpuSeconds } from "./service-cpu.js";
import { AGENTS_PER_PRINCIPAL, loadSettings } from "./settings.js";
import { verifyAcknowledged } from "./verify.js";

/** Lines of tool output in each agent's artifact (what its artifact and MCP reads page through). */
const ARTIFACT_LINES = 2_000;
const SETUP_CONCURRENCY = 16;

const log = (line: string) => process.stdout.write(`${line}\n`);

function replicaEnv(metricsToken: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    // The app's own settings given to `pnpm load` (STOWAGE_API_KEY_CACHE_SECONDS=0) reach every replica.
    const passed = name.startsWith("S3_") || name.startsWith("STOWAGE_");
    if (value !== undefined && (passed || ["PATH", "HOME", "TMPDIR", "LANG"].includes(name)))
      env[name] = value;
  }
  return {
    ...env,
    DATABASE_URL: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    // Every replica signs and checks the same URLs.
    STOWAGE_SIGNING_SECRET: randomBytes(32).toString("hex"),
    // The figures are the server's, not the rate limiter's refusals (it still counts every request).
    STOWAGE_RATE_LIMIT_PER_MINUTE: "100000000",
    STOWAGE_METRICS_TOKEN: metricsToken,
    STOWAGE_SHUTDOWN_GRACE_SECONDS: "5",
  };
}

async function writeToolOutput(replica: Replica, principalId: string, sessionId: string): Promise<void> {
  const sessions = createSessionFiles({
    dir: join(replica.dataDir, "agent-sessions"),
    segments: ["user", principalId],
  });
  const session = await sessions.get(sessionId);
  const text = Array.from(
    { length: ARTIFACT_LINES },
    (_, i) => `PASS test/case-${i}.test.ts (${i % 97} ms)`,
  ).join("\n");
  await session.artifacts.saveArtifact("bash", `${text}\n`);
}

async function inBatches<T>(items: T[], size: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await run(items[next++]!);
    }),
  );
}

async function scrapeMetrics(replicas: Replica[], token: string): Promise<string[]> {
  return Promise.all(
    replicas.map(async (replica) => {
      const response = await fetch(`${replica.url}/metrics`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return response.ok ? response.text() : "";
    }),
  );
}

async function main(): Promise<number> {
  const settings = loadSettings();
  const runId = randomBytes(4).toString("hex");
  const metricsToken = randomBytes(24).toString("hex");
  const profileDir = settings.profile ? await mkdtemp(join(tmpdir(), "stowage-load-prof-")) : undefined;
  log(
    `load: ${settings.agents} agents, ${settings.replicas} replica(s), ${settings.seconds} s${settings.crash ? ", replica 0 killed (SIGKILL) and restarted halfway" : ""} (run ${runId})`,
  );
  const env = replicaEnv(metricsToken);
  const dataDirs = await Promise.all(
    Array.from({ length: settings.replicas }, () => mkdtemp(join(tmpdir(), "stowage-load-"))),
  );
  const replicas: Replica[] = [];
  const recorder = new Recorder();
  const api = new Api(new Recorder(), settings.connections);
  const streams = streamDispatcher();
  try {
    replicas.push(
      ...(await Promise.all(
        dataDirs.map((dataDir, index) =>
          startReplica({
            index,
            dataDir,
            env,
            ...(profileDir ? { nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] } : {}),
          }),
        ),
      )),
    );
    const urls = replicas.map((replica) => replica.url);
    const principals = Array.from(
      { length: Math.ceil(settings.agents / AGENTS_PER_PRINCIPAL) },
      (_, i) => `load-${runId}-p${i}`,
    );
    const keys = await issueKeys(principals, process.env);
    const agents: AgentState[] = Array.from({ length: settings.agents }, (_, index) => {
      const principalId = principals[Math.floor(index / AGENTS_PER_PRINCIPAL)]!;
      return newAgentState({
        index,
        principalId,
        key: keys.get(principalId)!,
        sessionId: `load-${runId}-a${index}`,
        urls,
        home: index % urls.length,
      });
    });
    await inBatches(agents, SETUP_CONCURRENCY, async (agent) => {
      await setUpAgent(api, agent);
      await writeToolOutput(replicas[agent.plan.home]!, agent.plan.principalId, agent.plan.sessionId);
    });

    // From here, the measured run: setup's requests are not in the figures.
    api.recorder = recorder;
    const stop = new AbortController();
    const tails = agents.map((agent) => tailThread(agent, streams, stop.signal));
    const cpuAtStart = await Promise.all(replicas.map((replica) => replica.cpuSeconds()));
    const servicesAtStart = await serviceCpuSeconds();
    const started = performance.now();
    const loops = agents.map(async (agent) => {
      for (let turn = 1; !stop.signal.aborted; turn++) {
        await agentTurn(api, agent, turn);
        if (settings.thinkMs > 0) await new Promise((resolve) => setTimeout(resolve, settings.thinkMs));
      }
    });
    const crash = settings.crash
      ? new Promise<void>((resolve) =>
          setTimeout(
            async () => {
              log(
                `load: killing replica 0 (SIGKILL) at ${Math.round((performance.now() - started) / 1000)} s`,
              );
              await replicas[0]!.crashAndRestart();
              log(`load: replica 0 ready again at ${Math.round((performance.now() - started) / 1000)} s`);
              resolve();
            },
            (settings.seconds * 1000) / 2,
          ),
        )
      : Promise.resolve();
    await new Promise((resolve) => setTimeout(resolve, settings.seconds * 1000));
    await crash;
    stop.abort();
    await Promise.all(loops);
    const seconds = (performance.now() - started) / 1000;
    const cpuAtEnd = await Promise.all(replicas.map((replica) => replica.cpuSeconds()));
    const services = cpuBetween(servicesAtStart, await serviceCpuSeconds());
    await Promise.all(tails);

    const total = recorder.total(seconds);
    const requests = total.perSecond * seconds;
    const replicaCpu = cpuAtEnd.reduce((sum, cpu, i) => sum + cpu - cpuAtStart[i]!, 0);
    api.recorder = new Recorder();
    log("");
    for (const line of operationTable(recorder.rows(seconds))) log(line);

    const metricsTexts = await scrapeMetrics(replicas, metricsToken);
    log("");
    for (const line of storeOperationTable(metricsTexts)) log(line);

    const losses = await verifyAcknowledged(api, agents);
    const posted = agents.reduce((sum, agent) => sum + agent.acked.items.length, 0);
    const delivered = agents.reduce(
      (sum, agent) => sum + agent.acked.items.filter((id) => agent.delivered.has(id)).length,
      0,
    );
    log("");
    log(
      `verified: ${losses.checked} acknowledged writes read back, ${losses.lost} lost${losses.lost ? ` (${JSON.stringify(losses.byKind)})` : ""}`,
    );
    for (const example of losses.examples) log(`  lost ${example}`);
    log(
      `CPU during the measured run (${seconds.toFixed(0)} s): replicas ${replicaCpu.toFixed(1)} s (${((replicaCpu * 1000) / requests).toFixed(1)} ms per request), ` +
        Object.entries(services)
          .map(
            ([service, cpu]) =>
              `${service} ${cpu.toFixed(1)} s (${((cpu * 1000) / requests).toFixed(1)} ms per request)`,
          )
          .join(", ") +
        " (rgw and postgres: the whole machine's use of them)",
    );
    log(
      `live tails: ${delivered} of ${posted} posted items delivered over SSE (the other replica's tail, where there are two)`,
    );

    await inBatches(agents, SETUP_CONCURRENCY, async (agent) => {
      await api.call(
        "cleanup",
        `${urls[agent.plan.home]}/agents/sessions/${agent.plan.sessionId}`,
        "DELETE",
        {
          key: agent.plan.key,
          headers: { "x-stowage-dispatcher-token": agent.dispatcherToken ?? "" },
        },
      );
    });
    for (const replica of replicas) {
      log(
        `replica ${replica.index}: peak RSS ${((await replica.peakRssBytes()) / 1024 / 1024).toFixed(0)} MiB, CPU ${(await replica.cpuSeconds()).toFixed(1)} s (its whole life: setup and read-back too)`,
      );
    }
    await Promise.all(replicas.map((replica) => replica.stop()));
    if (profileDir) {
      const summary = await summarizeProfiles(profileDir);
      log("");
      log(
        `CPU profile of the replicas (${(summary.totalMs / 1000).toFixed(1)} s sampled), self time by package:`,
      );
      for (const spot of summary.packages)
        log(`  ${(spot.share * 100).toFixed(1).padStart(5)}%  ${spot.where}`);
      log("by function:");
      for (const spot of summary.functions)
        log(`  ${(spot.share * 100).toFixed(1).padStart(5)}%  ${spot.where}`);
      log(`(profiles in ${profileDir})`);
    }
    log("");
    log(
      `load: ${total.perSecond.toFixed(1)} req/s, p99 ${total.p99Ms.toFixed(1)} ms, ${total.errors} errors, ${losses.lost} lost`,
    );
    if (losses.lost > 0) return 1;
    return total.errors > 0 && !settings.crash ? 1 : 0;
  } catch (err) {
    for (const replica of replicas)
      process.stderr.write(`replica ${replica.index} stderr:\n${replica.stderrTail()}\n`);
    throw err;
  } finally {
    await Promise.all(replicas.map((replica) => replica.stop().catch(() => {})));
    await api.close();
    await streams.close();
    await Promise.all(dataDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  }
}

/** Starting the replicas, setting up and reading back, beyond the agents' own share: past it the run has hung. */
const FIXED_BUDGET_S = 120;
/** Each agent's setup and read-back, at most (generous: a shared 2-core machine). */
const BUDGET_PER_AGENT_S = 1;

// Bounded, whatever hangs: past its budget, or on SIGINT/SIGTERM, the harness exits (failing) and
// its replicas are killed with it (`replicas.ts`).
const { seconds: runS, agents: agentCount } = loadSettings();
const budgetS = runS + FIXED_BUDGET_S + agentCount * BUDGET_PER_AGENT_S;
setTimeout(() => {
  process.stderr.write(`load: not finished within ${budgetS} s; stopping\n`);
  process.exit(1);
}, budgetS * 1000).unref();
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(1));
process.exitCode = await main();

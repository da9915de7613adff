import * as hdr from "hdr-histogram-js";

/** What one operation did over the run: its latencies (HdrHistogram, microseconds) and its failures. */
interface OperationFigures {
  histogram: hdr.Histogram;
  errors: number;
  /** The first few failures, for the report: status and code, never bodies. */
  samples: string[];
}

const MAX_ERROR_SAMPLES = 5;

/** One row of the report. */
export interface OperationRow {
  operation: string;
  requests: number;
  perSecond: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  errors: number;
  samples: string[];
}

/** Latency and errors per operation, and over every operation (the last line's p99). */
export class Recorder {
  readonly #operations = new Map<string, OperationFigures>();
  readonly #all = newHistogram();

  /** A request that was answered as expected, after `ms`. */
  ok(operation: string, ms: number): void {
    const micros = Math.max(1, Math.round(ms * 1000));
    this.#figures(operation).histogram.recordValue(micros);
    this.#all.recordValue(micros);
  }

  /** A request that failed (a transport error or an unexpected status); counted as a request too. */
  error(operation: string, ms: number, why: string): void {
    const figures = this.#figures(operation);
    figures.errors += 1;
    if (figures.samples.length < MAX_ERROR_SAMPLES) figures.samples.push(why);
    this.ok(operation, ms);
  }

  rows(seconds: number): OperationRow[] {
    return [...this.#operations.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([operation, figures]) => ({
        operation,
        requests: figures.histogram.totalCount,
        perSecond: figures.histogram.totalCount / seconds,
        p50Ms: figures.histogram.getValueAtPercentile(50) / 1000,
        p95Ms: figures.histogram.getValueAtPercentile(95) / 1000,
        p99Ms: figures.histogram.getValueAtPercentile(99) / 1000,
        errors: figures.errors,
        samples: figures.samples,
      }));
  }

  total(seconds: number): { requests: number; perSecond: number; p99Ms: number; errors: number } {
    let errors = 0;
    for (const figures of this.#operations.values()) errors += figures.errors;
    return {
      requests: this.#all.totalCount,
      perSecond: this.#all.totalCount / seconds,
      p99Ms: this.#all.getValueAtPercentile(99) / 1000,
      errors,
    };
  }

  #figures(operation: string): OperationFigures {
    let figures = this.#operations.get(operation);
    if (!figures) {
      figures = { histogram: newHistogram(), errors: 0, samples: [] };
      this.#operations.set(operation, figures);
    }
    return figures;
  }
}

/** 1 µs to 10 minutes, three significant digits: what HdrHistogram keeps exactly enough for p99. */
function newHistogram(): hdr.Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 600_000_000,
    numberOfSignificantValueDigits: 3,
  });
}

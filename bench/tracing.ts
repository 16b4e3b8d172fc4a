/**
 * BENCH_TRACING (our server processes only): what tracing costs per token.
 * - `off` (the default): `observability.tracing: false`, the same path as where `@opentelemetry/api`
 *   is not installed, or is installed with no SDK registered (tracing is then off by default).
 * - `api`: `observability.tracing: true` with the API and no SDK: our spans are the API's no-op spans.
 * - `sdk`: an SDK registered as a host would (NodeTracerProvider, every span sampled, a batch
 *   processor) exporting to an exporter that drops what it is given: the cost of making, ending
 *   and batching spans without the network cost of sending them.
 */
import { BatchSpanProcessor, NodeTracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-node';

export const TRACING_MODES = ['off', 'api', 'sdk'] as const;
export type TracingMode = (typeof TRACING_MODES)[number];

/** The knob's value (`off` when unset). @throws Error for another value. */
export function tracingMode(): TracingMode {
  const raw = process.env.BENCH_TRACING || 'off';
  const found = TRACING_MODES.find((mode) => mode === raw);
  if (!found) throw new Error(`BENCH_TRACING must be one of ${TRACING_MODES.join(', ')}, got "${raw}"`);
  return found;
}

/** Spans exported nowhere (counted, so that the process cannot drop the work). */
class DroppingExporter implements SpanExporter {
  exported = 0;

  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    this.exported += spans.length;
    done({ code: 0 });
  }

  async shutdown(): Promise<void> {}
}

/** Registers the SDK in this process when the mode asks for it; the server's `observability.tracing`. */
export function setUpTracing(mode: TracingMode): boolean | undefined {
  if (mode === 'sdk') new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new DroppingExporter())] }).register();
  return mode === 'off' ? false : mode === 'api' ? true : undefined;
}

import type { IncomingHttpHeaders } from 'node:http';
import type * as OpenTelemetry from '@opentelemetry/api';

/*
 * TRACING with OpenTelemetry: spans for our endpoints, the engine's token issuance, the store's
 * calls and our outgoing requests, joined to the host's trace. `@opentelemetry/api` is an
 * optional peer: it is imported once, at start; where it is not installed (or `observability.tracing`
 * is false) every method below does nothing and allocates nothing, and the callers skip their
 * middleware and wrappers altogether (`enabled`).
 *
 * What a span may carry: route templates, methods, statuses, grant types, an authenticated client's
 * id, a store operation and its model or record kind, an outgoing request's host. Never a path or
 * query as sent, a header, a body, a cookie, a store key or id (a code's or token's id is the code
 * or token), a user name: whatever can sign in or name a user stays out.
 *
 * The types of `@opentelemetry/api` stay inside this module: our declarations must compile in a
 * project that does not install it.
 */

/** The values a span attribute of ours takes. */
export type TraceAttributes = Readonly<Record<string, string | number | boolean>>;

/** A span we started and end ourselves (the request's server span). */
export interface TraceSpan {
  setAttribute(key: string, value: string | number | boolean): unknown;
  end(): void;
}

/** What `@opentelemetry/api` is imported by (a test passes one that fails, as where it is not installed). */
export type TracingImporter = () => Promise<unknown>;

type Api = typeof OpenTelemetry;

const importApi: TracingImporter = () => import('@opentelemetry/api');
/** The API of the process, imported once whatever the number of servers started. */
let imported: Promise<Api | undefined> | undefined;

/** The API, or undefined when it cannot be imported (not installed) or is not the API. */
async function load(importer: TracingImporter): Promise<Api | undefined> {
  try {
    const api = (await importer()) as Partial<Api> | undefined;
    return api?.trace && api.context && api.propagation ? (api as Api) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The tracing of a server: on when `setting` is not false and the API imports. `onMissing` is told
 * when tracing was asked for (`true`) and the API is not installed.
 */
export async function startTracing(setting: boolean | undefined, onMissing: () => void, importer?: TracingImporter): Promise<Tracing> {
  if (setting === false) return NO_TRACING;
  const api = importer ? await load(importer) : await (imported ??= load(importApi));
  if (!api) {
    if (setting === true) onMissing();
    return NO_TRACING;
  }
  // The API alone (pulled in by another package, no SDK registered) records nothing: by default
  // no middleware and no wrapper are installed for it, as when it is absent. A host registers its
  // SDK before it starts the server, as OpenTelemetry asks; `true` turns tracing on regardless.
  if (setting === undefined && !sdkRegistered(api)) return NO_TRACING;
  return new Tracing(api);
}

/** Whether a tracer provider other than the API's no-op one is registered (an SDK). */
function sdkRegistered(api: Api): boolean {
  const provider = api.trace.getTracerProvider() as OpenTelemetry.TracerProvider & { getDelegate?: () => OpenTelemetry.TracerProvider };
  const delegate = typeof provider.getDelegate === 'function' ? provider.getDelegate() : provider;
  return delegate.constructor.name !== 'NoopTracerProvider';
}

/** Spans of ours, or nothing at all (`NO_TRACING`). */
export class Tracing {
  /** Whether spans are made: when not, callers leave out their middleware and wrappers. */
  readonly enabled: boolean;
  readonly #api: Api | undefined;
  readonly #tracer: OpenTelemetry.Tracer | undefined;

  /** `api`: `@opentelemetry/api` as `startTracing` imported it (typed loosely: see the module comment). */
  constructor(api: unknown) {
    this.#api = api as Api | undefined;
    this.enabled = api !== undefined;
    this.#tracer = this.#api?.trace.getTracer('talent-auth');
  }

  /**
   * Starts a request's SERVER span: its parent is the host's span when the host's own
   * instrumentation made one, else the caller's (`traceparent`, `tracestate`), else none.
   * Undefined when tracing is off.
   */
  startServerSpan(name: string, headers: IncomingHttpHeaders, attributes: TraceAttributes): TraceSpan | undefined {
    const api = this.#api;
    if (!api) return undefined;
    const active = api.context.active();
    const parent = api.trace.getSpan(active) ? active : api.propagation.extract(active, headers);
    return this.#tracer!.startSpan(name, { kind: api.SpanKind.SERVER, attributes }, parent);
  }

  /**
   * Runs `run` with `span` active: the spans made inside are its children. A span that records
   * nothing (no SDK registered, or not sampled) is not made active, so that the request's store
   * calls and outgoing calls make no spans either: with the API installed and no SDK, a request
   * costs one span start, not one per store call.
   */
  within<T>(span: TraceSpan | undefined, run: () => T): T {
    const api = this.#api;
    if (!api || !span || !(span as OpenTelemetry.Span).isRecording()) return run();
    return api.context.with(api.trace.setSpan(api.context.active(), span as OpenTelemetry.Span), run);
  }

  /** Marks a span failed (a 5xx answer, an error thrown), with the error's class only. */
  fail(span: TraceSpan | undefined, error?: unknown): void {
    const api = this.#api;
    if (!api || !span) return;
    const name = error instanceof Error ? error.name : undefined;
    (span as OpenTelemetry.Span).setStatus({ code: api.SpanStatusCode.ERROR, ...(name ? { message: name } : {}) });
    if (name) span.setAttribute('error.type', name);
  }

  /** Adds attributes to the active span (the request's, where an endpoint learns them late). */
  annotate(attributes: TraceAttributes): void {
    this.#api?.trace.getActiveSpan()?.setAttributes(attributes);
  }

  /** Runs `run` in an INTERNAL span, a child of the active one: failed when `run` throws. */
  inSpan<T>(name: string, attributes: TraceAttributes, run: () => Promise<T>): Promise<T> {
    const api = this.#api;
    if (!api || !api.trace.getActiveSpan()?.isRecording()) return run();
    return this.#tracer!.startActiveSpan(name, { kind: api.SpanKind.INTERNAL, attributes }, (span) => this.#ended(span, run()));
  }

  /**
   * A store call's CLIENT span, made only inside a trace: the store's background work (watching,
   * heartbeats) would otherwise make a root span every few seconds.
   */
  storeCall<T>(name: string, attributes: TraceAttributes, run: () => Promise<T>): Promise<T> {
    const api = this.#api;
    if (!api || !api.trace.getActiveSpan()?.isRecording()) return run();
    return this.#tracer!.startActiveSpan(name, { kind: api.SpanKind.CLIENT, attributes }, (span) => this.#ended(span, run()));
  }

  /**
   * An outgoing HTTP request's CLIENT span: its context goes out in `headers` as a W3C
   * `traceparent` alone; its attributes are the method, the host and the answer's status, never
   * the path, the query or a body. The destinations (an app's back-channel logout URI, a client's
   * jwks_uri, a tenant's identity provider) belong to others: the host's `tracestate` and any
   * baggage (the host's, or what a caller sent in) are not theirs to read, so the registered
   * propagator, which would send them, is not used here.
   */
  outgoing(name: string, method: string, target: URL, headers: Record<string, string>, send: () => Promise<Response>): Promise<Response> {
    const api = this.#api;
    if (!api) return send();
    const attributes = { 'http.request.method': method, 'server.address': target.hostname, ...(target.port ? { 'server.port': Number(target.port) } : {}) };
    return this.#tracer!.startActiveSpan(name, { kind: api.SpanKind.CLIENT, attributes }, (span) => {
      const { traceId, spanId, traceFlags } = span.spanContext();
      if (api.isSpanContextValid(span.spanContext())) headers.traceparent = `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
      return this.#ended(span, send().then((response) => {
        span.setAttribute('http.response.status_code', response.status);
        if (response.status >= 500) this.fail(span);
        return response;
      }));
    });
  }

  async #ended<T>(span: OpenTelemetry.Span, running: Promise<T>): Promise<T> {
    try {
      return await running;
    } catch (error) {
      this.fail(span, error);
      throw error;
    } finally {
      span.end();
    }
  }
}

/** No tracing: the API is not installed, or `observability.tracing` is false. */
export const NO_TRACING = new Tracing(undefined);

import { collectDefaultMetrics, Counter, Gauge, type Histogram, Registry } from 'prom-client';
import type { Datasource } from '../plugin-api/sql-dialect.js';
import type { DatasourceStatus } from './datasource-readiness.js';
import type { TaskBudgets, TaskState } from '../plugin-api/task-documents.js';
import type { SemanticState } from '../semantic/semantic-types.js';
import { counterSeries, histogramSeries } from './series-metric.js';
import { STATEMENT_OUTCOMES, type StatementObserver, type StatementOutcome } from '../sql/statement-outcome.js';
import type { TaskObserver } from '../tasks/task-observer.js';
import type { ActionRunObserver, RecoveryOutcome } from '../endpoints/actions/action-journal.js';

/** Seconds: from a cached answer to the Task API's default deadline. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Every activation state, so that each is reported, zeros included; a new state fails to compile here. */
const NO_ACTIVATIONS: Readonly<Record<SemanticState, number>> = { catalogOnly: 0, invalid: 0, compileFailed: 0, active: 0 };

/**
 * The Prometheus metrics of one service (docs/observability.md), in a prom-client Registry of its own (`prometheus`): tests start
 * several services in one process, and prom-client's global one would mix them. The core reports to
 * it through the observers it declares (statements, tasks); the HTTP edge through `request`; activation
 * states and pool usage are read when the metrics are.
 */
export class ServiceMetrics implements StatementObserver, TaskObserver, ActionRunObserver {
  private readonly prometheus = new Registry();
  private readonly datasources = new Map<string, Datasource>();
  private activations: () => readonly { state: SemanticState }[] = () => [];
  private datasourceStatuses: () => Promise<readonly DatasourceStatus[]> = () => Promise.resolve([]);

  // the series of the request path: a label set is looked up by its values, never hashed per request
  private readonly httpRequests = counterSeries('vdb_http_requests_total', 'HTTP requests answered, by method, route pattern and status', this.prometheus);
  private readonly httpDuration = histogramSeries('vdb_http_request_duration_seconds',
    'Time from receiving a request to the end of its answer, by method and route pattern', LATENCY_BUCKETS, this.prometheus);
  private readonly statements = counterSeries('vdb_statements_total',
    'SQL statements of endpoints and tasks, by datasource and outcome (ok, denied, timeout, cancelled, failed)', this.prometheus);
  private readonly statementDuration = histogramSeries('vdb_statement_duration_seconds',
    'Time the database took for a statement that reached it, by datasource', LATENCY_BUCKETS, this.prometheus);
  private readonly federatedPlans = new Counter({
    name: 'vdb_federated_plans_total',
    help: 'Statements over several datasources, by outcome (ok, denied, timeout, cancelled, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.prometheus],
  });
  private readonly sourceRowsRead = new Counter({
    name: 'vdb_federated_source_rows_total',
    help: 'Rows the pushed statements of federated plans read, by datasource',
    labelNames: ['datasource'] as const,
    registers: [this.prometheus],
  });
  private readonly shippedPlans = new Counter({
    name: 'vdb_federated_shipped_total',
    help: 'Statements over several datasources one of them answered, the rows read from the others sent to it, by that datasource',
    labelNames: ['datasource'] as const,
    registers: [this.prometheus],
  });
  /** By route pattern, method, then status. */
  private readonly requestSeries = new Map<string, Map<string, { duration: Histogram; byStatus: Map<number, Counter> }>>();
  /** By datasource, then outcome. */
  private readonly statementSeries = new Map<string, { duration?: Histogram; byOutcome: Map<StatementOutcome, Counter> }>();

  private readonly tasks = new Counter({
    name: 'vdb_tasks_total',
    help: 'Tasks of the Task API that answered a final snapshot, by capability and state',
    labelNames: ['capability', 'state'] as const,
    registers: [this.prometheus],
  });

  private readonly budgetStops = new Counter({
    name: 'vdb_task_budget_stops_total',
    help: 'Tasks stopped by a budget, by capability and budget (deadline: maxDurationSeconds)',
    labelNames: ['capability', 'budget'] as const,
    registers: [this.prometheus],
  });

  private readonly actionRunsNeedingAttention = new Counter({
    name: 'vdb_action_runs_needing_attention_total',
    help: 'Action runs whose compensation cannot succeed, left needs_attention for a person to repair, by action',
    labelNames: ['action'] as const,
    registers: [this.prometheus],
  });

  private readonly actionRunsRecovered = new Counter({
    name: 'vdb_action_runs_recovered_total',
    help: 'Action runs a dead process left unfinished that recovery finished, by action and outcome (compensated, needs_attention)',
    labelNames: ['action', 'outcome'] as const,
    registers: [this.prometheus],
  });

  private readonly mcpRequests = new Counter({
    name: 'vdb_mcp_requests_total',
    help: 'MCP messages received, by JSON-RPC method (other: any other; stream, session_end: a session\'s GET and DELETE; parse_error, unknown_session)',
    labelNames: ['method'] as const,
    registers: [this.prometheus],
  });

  private readonly mcpToolCalls = new Counter({
    name: 'vdb_mcp_tool_calls_total',
    help: 'MCP tool calls, by tool (unknown: a name the service has no tool of) and outcome (ok, error, cancelled: by its client)',
    labelNames: ['tool', 'outcome'] as const,
    registers: [this.prometheus],
  });

  constructor() {
    collectDefaultMetrics({ register: this.prometheus });
    const metrics = this;
    new Gauge({
      name: 'vdb_semantic_activations',
      help: 'VDB versions by semantic activation state',
      labelNames: ['state'] as const,
      registers: [this.prometheus],
      collect() {
        const counts = { ...NO_ACTIVATIONS };
        for (const activation of metrics.activations()) counts[activation.state] += 1;
        for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
      },
    });
    new Gauge({
      name: 'vdb_datasource_pool_connections',
      help: 'Connections of a datasource pool: used, free, and pending (requests waiting for one)',
      labelNames: ['datasource', 'state'] as const,
      registers: [this.prometheus],
      collect() {
        this.reset();
        for (const [name, datasource] of metrics.datasources) {
          const usage = datasource.poolUsage?.();
          if (!usage) continue;
          for (const [state, count] of Object.entries(usage)) this.set({ datasource: name, state }, count);
        }
      },
    });
    new Gauge({
      name: 'vdb_datasource_up',
      help: 'Whether a datasource answered a trivial statement within 3 s when the metrics were read (1) or not (0)',
      labelNames: ['datasource'] as const,
      registers: [this.prometheus],
      async collect() {
        const statuses = await metrics.datasourceStatuses();
        this.reset();
        for (const { name, up } of statuses) this.set({ datasource: name }, up ? 1 : 0);
      },
    });
  }

  /** Where the datasources' answers are read from when the metrics are (a check bounded in time). */
  watchDatasources(read: () => Promise<readonly DatasourceStatus[]>): void {
    this.datasourceStatuses = read;
  }

  /** Where activation states are read from: the semantic registry, once activation has made it. */
  watchActivations(read: () => readonly { state: SemanticState }[]): void {
    this.activations = read;
  }

  /** One answered request; `route` is the route's pattern (`/api/v1/query/perform/:name`), never the URL. */
  request(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.requestSeries.get(route);
    if (byMethod === undefined) this.requestSeries.set(route, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (series === undefined) byMethod.set(method, (series = { duration: this.httpDuration.add({ method, route }), byStatus: new Map() }));
    let counter = series.byStatus.get(status);
    if (counter === undefined) series.byStatus.set(status, (counter = this.httpRequests.add({ method, route, status: String(status) })));
    counter.inc();
    series.duration.observe(seconds);
  }

  mcpRequest(method: string): void {
    this.mcpRequests.inc({ method });
  }

  mcpToolCall(tool: string, outcome: 'ok' | 'error' | 'cancelled'): void {
    this.mcpToolCalls.inc({ tool, outcome });
  }

  opened(name: string, datasource: Datasource): void {
    this.datasources.set(name, datasource);
    // every outcome is reported from the start, zeros included, so that rates over them are defined
    this.statementsOf(name);
  }

  statement(datasource: string, outcome: StatementOutcome, seconds?: number): void {
    const series = this.statementsOf(datasource);
    (series.byOutcome.get(outcome) as Counter).inc();
    if (seconds !== undefined) (series.duration ??= this.statementDuration.add({ datasource })).observe(seconds);
  }

  sourceRows(datasource: string, rows: number): void {
    this.sourceRowsRead.inc({ datasource }, rows);
  }

  federatedPlan(outcome: StatementOutcome): void {
    this.federatedPlans.inc({ outcome });
  }

  shippedPlan(datasource: string): void {
    this.shippedPlans.inc({ datasource });
  }

  private statementsOf(datasource: string): { duration?: Histogram; byOutcome: Map<StatementOutcome, Counter> } {
    let series = this.statementSeries.get(datasource);
    if (series === undefined) {
      const byOutcome = new Map(STATEMENT_OUTCOMES.map((outcome) => [outcome, this.statements.add({ datasource, outcome })] as const));
      this.statementSeries.set(datasource, (series = { byOutcome }));
    }
    return series;
  }

  taskEnded(capability: string, state: TaskState, budget?: keyof TaskBudgets | 'deadline'): void {
    this.tasks.inc({ capability, state });
    if (budget !== undefined) this.budgetStops.inc({ capability, budget });
  }

  runNeedsAttention(action: string): void {
    this.actionRunsNeedingAttention.inc({ action });
  }

  runRecovered(action: string, outcome: RecoveryOutcome): void {
    this.actionRunsRecovered.inc({ action, outcome });
  }

  /** The text exposition format, with its content type. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.prometheus.contentType, text: await this.prometheus.metrics() };
  }
}

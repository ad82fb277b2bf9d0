import type { RuntimeUsage, TaskBudgets, TaskUsage } from '../plugin-api/task-documents.js';

/** A budget that ran out: the orchestrator cancels the runtime task and answers `budget_exceeded`. */
export class BudgetExceeded extends Error {
  constructor(readonly budget: keyof TaskBudgets | 'deadline', detail: string) {
    super(detail);
    this.name = 'BudgetExceeded';
  }
}

/** The usage counters of one task against its budgets. */
export class TaskMeter {
  private readonly counted: TaskUsage = { inputTokens: 0, outputTokens: 0, modelCalls: 0, serviceActions: 0, observationRows: 0, observationBytes: 0 };
  private steps = 0;

  constructor(readonly budgets: TaskBudgets) {}

  get usage(): TaskUsage {
    return { ...this.counted };
  }

  /** Model usage as the runtime reports it (cumulative for the task). */
  runtimeReported(usage: RuntimeUsage): void {
    this.counted.inputTokens = usage.inputTokens;
    this.counted.outputTokens = usage.outputTokens;
    this.counted.modelCalls = usage.modelCalls;
    this.check('maxModelCalls', this.counted.modelCalls, 'model calls');
    this.check('maxInputTokens', this.counted.inputTokens, 'input tokens');
    this.check('maxOutputTokens', this.counted.outputTokens, 'output tokens');
  }

  /** One round of pending actions. */
  step(): void {
    this.steps += 1;
    this.check('maxSteps', this.steps, 'steps');
  }

  /** One action about to run. */
  serviceAction(): void {
    this.counted.serviceActions += 1;
    this.check('maxServiceActions', this.counted.serviceActions, 'service actions');
  }

  /** Rows an action may still return without overrunning `maxObservationRows`. */
  rowsLeft(): number {
    return Math.max(0, this.budgets.maxObservationRows - this.counted.observationRows);
  }

  /** Bytes of rows an action may still return without overrunning `maxObservationBytes`. */
  bytesLeft(): number {
    return Math.max(0, this.budgets.maxObservationBytes - this.counted.observationBytes);
  }

  observed(rows: number, bytes: number): void {
    this.counted.observationRows += rows;
    this.counted.observationBytes += bytes;
    this.check('maxObservationBytes', this.counted.observationBytes, 'observation bytes');
  }

  private check(budget: keyof TaskBudgets, value: number, what: string): void {
    const limit = this.budgets[budget];
    if (value > limit) throw new BudgetExceeded(budget, `${budget}: ${value} ${what} exceed the budget of ${limit}`);
  }
}

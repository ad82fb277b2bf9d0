import type { TaskBudgets, TaskState } from '../plugin-api/task-documents.js';

/** Told how each task ended, for the service's metrics (docs/observability.md). */
export interface TaskObserver {
  /**
   * A task answered its final snapshot in `state`; `budget` names what stopped it when the state is
   * `budget_exceeded` (a budget of `runtime.budgets`, or `deadline`).
   */
  taskEnded(capability: string, state: TaskState, budget?: keyof TaskBudgets | 'deadline'): void;
}

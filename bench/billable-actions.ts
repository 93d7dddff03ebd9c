// Counts what a workflow history costs by Temporal Cloud's published rules for billable
// actions (docs.temporal.io/cloud/actions), read from the history alone:
//   - a workflow start is 1; a Signal-With-Start is 1 in all, start and signal together;
//   - every other signal is 1;
//   - every activity start or retry is 1 (the started event carries the attempt number);
//   - all markers (local activities, patches) recorded by one workflow task are 1 together;
//   - every timer started is 1; every search-attribute upsert is 1, but for one that only sets
//     TemporalChangeVersion (written by patched(), exempt);
//   - a child workflow start is 2; signalling another workflow is 1; an accepted update is 1.
// Heartbeats, queries and schedule actions are not in a history and are not counted here
// (the lifecycle uses none of them per purchase).
// Input is a history in its JSON form (`historyToJSON`), as `fetchHistory()` returns after
// conversion and as the recorded histories in test/workflows/histories are stored.

export interface HistoryCost {
  actions: number;
  events: number;
  /** Actions by rule, for the report and for tests that say which rule a change saved. */
  byRule: Record<string, number>;
}

interface JsonEvent {
  eventId: string;
  eventType: string;
  [attributes: string]: unknown;
}

export function costOfHistory(history: { events?: JsonEvent[] }): HistoryCost {
  const events = history.events ?? [];
  const byRule: Record<string, number> = {};
  const add = (rule: string, n = 1) => (byRule[rule] = (byRule[rule] ?? 0) + n);
  const markerTasks = new Set<string>();

  const startedBy = attributesOf(events[0] ?? { eventId: '', eventType: '' }).identity;
  let taskStarted = false;
  let startSignalSeen = false;

  for (const event of events) {
    const attributes = attributesOf(event);
    switch (event.eventType) {
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED':
        add('workflow started');
        break;
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED':
        // Signal-With-Start writes its signal with the start, before the first workflow task
        // starts, from the same client: the pair is one action, already counted by the start.
        if (!taskStarted && !startSignalSeen && attributes.identity === startedBy) {
          startSignalSeen = true;
          break;
        }
        add('signal');
        break;
      case 'EVENT_TYPE_WORKFLOW_TASK_STARTED':
        taskStarted = true;
        break;
      case 'EVENT_TYPE_ACTIVITY_TASK_STARTED':
        add('activity started or retried', Number(attributes.attempt ?? 1));
        break;
      case 'EVENT_TYPE_MARKER_RECORDED':
        markerTasks.add(String(attributes.workflowTaskCompletedEventId));
        break;
      case 'EVENT_TYPE_TIMER_STARTED':
        add('timer started');
        break;
      case 'EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES': {
        const fields = Object.keys(
          (attributes.searchAttributes as { indexedFields?: object } | undefined)?.indexedFields ?? {},
        );
        if (fields.length === 1 && fields[0] === 'TemporalChangeVersion') break;
        add('search attribute upsert');
        break;
      }
      case 'EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED':
        add('child workflow', 2);
        break;
      case 'EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED':
        add('signal');
        break;
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED':
        add('update');
        break;
    }
  }
  if (markerTasks.size > 0) add('local activities (per workflow task)', markerTasks.size);
  const actions = Object.values(byRule).reduce((sum, n) => sum + n, 0);
  return { actions, events: events.length, byRule };
}

/** The cost of one purchase: the sum over every workflow history that served it. */
export function costOfHistories(histories: Array<{ events?: JsonEvent[] }>): HistoryCost {
  const total: HistoryCost = { actions: 0, events: 0, byRule: {} };
  for (const history of histories) {
    const cost = costOfHistory(history);
    total.actions += cost.actions;
    total.events += cost.events;
    for (const [rule, n] of Object.entries(cost.byRule)) total.byRule[rule] = (total.byRule[rule] ?? 0) + n;
  }
  return total;
}

function attributesOf(event: JsonEvent): Record<string, unknown> {
  const key = Object.keys(event).find((k) => k.endsWith('EventAttributes'));
  return (key ? event[key] : {}) as Record<string, unknown>;
}

// The cost counter of `npm run bench` on recorded histories whose actions were counted by
// hand from Temporal Cloud's published rules, and on small histories that isolate one rule.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { costOfHistories, costOfHistory } from '../../bench/billable-actions';

const HISTORIES = join(__dirname, '..', 'workflows', 'histories');
const recorded = (name: string) => JSON.parse(readFileSync(join(HISTORIES, `${name}.json`), 'utf8'));
const event = (eventId: number, type: string, attributes: Record<string, unknown> = {}) => ({
  eventId: String(eventId),
  eventType: `EVENT_TYPE_${type}`,
  [`${type.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())}EventAttributes`]: attributes,
});

describe('billable actions of a history', () => {
  it('counts the v1 authorized-then-settled lifecycle as 11 actions in 40 events', () => {
    // Signal-With-Start 1, settlement signal 1, 4 activities (preview, start delivery, settle,
    // start delivery), 4 upserts (ids and status, twice), the settlement timer 1.
    assert.deepEqual(costOfHistory(recorded('v1-lifecycle-auth-settle')), {
      actions: 11,
      events: 40,
      byRule: {
        'workflow started': 1,
        'search attribute upsert': 4,
        'activity started or retried': 4,
        'timer started': 1,
        signal: 1,
      },
    });
  });

  it('adds up the workflows of one purchase: v1 settled purchase = lifecycle 5 + its delivery 2', () => {
    const cost = costOfHistories([recorded('v1-lifecycle-refund'), recorded('v1-webhook-delivery-retry')]);
    assert.equal(cost.actions, 4 + 2);
    assert.equal(cost.events, 14 + 11);
  });

  it('takes a signal recorded with the start, before any workflow task, as part of Signal-With-Start', () => {
    const started = { identity: 'api@host' };
    const withStart = {
      events: [
        event(1, 'WORKFLOW_EXECUTION_STARTED', started),
        event(2, 'WORKFLOW_TASK_SCHEDULED'),
        event(3, 'WORKFLOW_EXECUTION_SIGNALED', { identity: 'api@host' }),
        event(4, 'WORKFLOW_TASK_STARTED'),
      ],
    };
    assert.equal(costOfHistory(withStart).actions, 1);
    const later = {
      events: [
        event(1, 'WORKFLOW_EXECUTION_STARTED', started),
        event(2, 'WORKFLOW_TASK_SCHEDULED'),
        event(3, 'WORKFLOW_TASK_STARTED'),
        event(4, 'WORKFLOW_EXECUTION_SIGNALED', { identity: 'api@host' }),
      ],
    };
    assert.equal(costOfHistory(later).actions, 2);
  });

  it('counts all markers of one workflow task as one action, every attempt of an activity, and no patch-version upsert', () => {
    const history = {
      events: [
        event(1, 'WORKFLOW_EXECUTION_STARTED'),
        event(2, 'MARKER_RECORDED', { workflowTaskCompletedEventId: '5' }),
        event(3, 'MARKER_RECORDED', { workflowTaskCompletedEventId: '5' }),
        event(4, 'MARKER_RECORDED', { workflowTaskCompletedEventId: '9' }),
        event(5, 'ACTIVITY_TASK_STARTED', { attempt: 3 }),
        event(6, 'START_CHILD_WORKFLOW_EXECUTION_INITIATED'),
        event(7, 'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES', {
          searchAttributes: { indexedFields: { TemporalChangeVersion: {} } },
        }),
        event(8, 'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES', {
          searchAttributes: { indexedFields: { RewardsStatus: {}, TemporalChangeVersion: {} } },
        }),
      ],
    };
    assert.deepEqual(costOfHistory(history).byRule, {
      'workflow started': 1,
      'activity started or retried': 3,
      'child workflow': 2,
      'search attribute upsert': 1,
      'local activities (per workflow task)': 2,
    });
  });
});

// Counts failed activity executions by type, for /metrics. Workflow task failures are
// counted by Temporal's own worker metrics (see worker/main.ts).
import { Context } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { activityFailures } from '../core/metrics';

export class ActivityFailureCounter implements ActivityInboundCallsInterceptor {
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    try {
      return await next(input);
    } catch (err) {
      activityFailures.inc({ activity: Context.current().info.activityType });
      throw err;
    }
  }
}

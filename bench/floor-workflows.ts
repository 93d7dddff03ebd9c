// The floor: the cheapest purchase Temporal can run. Started by Signal-With-Start with the
// lifecycle's signal and search attributes, it completes on that signal and does nothing
// else (no activity, no timer, no upsert). Its completion is reported through a sink, which
// is outside the history and costs the server nothing, so the floor measures exactly
// "start + signal + one workflow task + complete" on the same server as the real lifecycle.
// Deterministic code only: imports @temporalio/workflow and types.
import { condition, defineSignal, proxySinks, setHandler, type Sinks } from '@temporalio/workflow';

export const FLOOR_WORKFLOW_TYPE = 'floorPurchase';

export interface FloorSinks extends Sinks {
  bench: { completed(): void };
}

const { bench } = proxySinks<FloorSinks>();
const settlementSignal = defineSignal<[{ eventId: string }]>('settlement');

export async function floorPurchase(): Promise<void> {
  let signalled = false;
  setHandler(settlementSignal, () => void (signalled = true));
  await condition(() => signalled);
  bench.completed();
}

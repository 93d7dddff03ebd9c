// The plans PostgreSQL keeps for our prepared hot statements. A named statement is planned
// generically after a few executions, from whatever statistics the table has then: on a
// freshly loaded database (no ANALYZE yet) a plan that reads the wrong index stays in use for
// every request of the connection. Checked on a new, empty database, the worst case.
import assert from 'node:assert/strict';
import pg from 'pg';
import { freshDatabase } from '../helpers/databases';
import { migrate } from '../../prisma/migrate';
import { REWARD_DETAIL, REWARD_OVERVIEWS } from '../../api/rewards/reward-detail';
import { CARD_DIRECTORY } from '../../api/ingestion/resolve';
import {
  GROUP_ENROLMENTS,
  GROUP_OFFER_VIEW,
  GROUP_OWN_VIEW,
  GROUP_RANKED_KEPT_VIEW,
  GROUP_RANKED_OWN_VIEW,
  GROUP_RANKED_VIEW,
} from '../../api/catalogue/group-offers';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Parent Relationship'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Recheck Cond'?: string;
  Plans?: PlanNode[];
}

function scansOf(plan: PlanNode, relation: string): PlanNode[] {
  const own = plan['Relation Name'] === relation ? [plan] : [];
  return [...own, ...(plan.Plans ?? []).flatMap((child) => scansOf(child, relation))];
}

/** The indexes a relation is read by: an index scan's own, a bitmap heap scan's bitmap index scans'. */
function indexesOn(plan: PlanNode, relation: string): string[] {
  const bitmaps =
    plan['Relation Name'] === relation && plan['Node Type'] === 'Bitmap Heap Scan'
      ? (plan.Plans ?? []).filter((p) => p['Node Type'] === 'Bitmap Index Scan').map((p) => p['Index Name']!)
      : [];
  const own = plan['Relation Name'] === relation && plan['Index Name'] ? [plan['Index Name'], ...bitmaps] : bitmaps;
  const seqScan = plan['Relation Name'] === relation && plan['Node Type'] === 'Seq Scan' ? ['(sequential scan)'] : [];
  return [...own, ...seqScan, ...(plan.Plans ?? []).flatMap((child) => indexesOn(child, relation))];
}

describe('generic plans of the hot statements', function () {
  this.timeout(60_000);
  let client: pg.Client;

  before(async () => {
    const url = await freshDatabase('hot_plans');
    await migrate(url);
    client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('SET plan_cache_mode = force_generic_plan');
  });
  after(() => client?.end());

  async function genericPlan(text: string, parameters: string[]): Promise<PlanNode> {
    await client.query('DEALLOCATE ALL');
    await client.query(`PREPARE hot AS ${text}`);
    // Literal arguments: EXECUTE takes no bind parameters, and the generic plan ignores the values.
    const values = parameters.map((p) => client.escapeLiteral(p)).join(', ');
    const { rows } = await client.query(`EXPLAIN (FORMAT JSON) EXECUTE hot(${values})`);
    return (rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0].Plan;
  }

  // A purchase's reward events by its id, a refund's by the refund's: never every reward event
  // of the issuer.
  const rewardEventIndexes = ['reward_event_transaction_id_idx', 'reward_event_source_event_id_idx'];

  it('reads the one event of a reward detail by its primary key, and its reward events by its id', async () => {
    const plan = await genericPlan(REWARD_DETAIL.text, ['iss_x', 'chg_x', 'txn_x']);
    assert.deepEqual(indexesOn(plan, 'ingested_event'), ['ingested_event_pkey'], JSON.stringify(plan));
    assert.deepEqual(indexesOn(plan, 'reward_event'), rewardEventIndexes, JSON.stringify(plan));
  });

  it("reads reward overviews by primary key or by the issuer's ids, and their reward events by event id", async () => {
    const plan = await genericPlan(REWARD_OVERVIEWS.text, ['iss_x', 'chg_x', '{txn_x}', '{ext_x}']);
    // On an empty table the ids may be found by a sequential scan; what must never happen is the
    // issuer's (issuer, kind, external id) index read without its external id: every settled
    // event of the issuer for each request, once the table is large.
    const eventScans = scansOf(plan, 'ingested_event');
    assert.equal(eventScans.length, 2, JSON.stringify(plan));
    for (const scan of eventScans.filter((n) => n['Index Name'] === 'ingested_event_issuer_id_kind_external_id_key'))
      assert.match(scan['Index Cond'] ?? '', /external_id = ANY/, JSON.stringify(scan));
    assert.deepEqual(indexesOn(plan, 'reward_event'), rewardEventIndexes, JSON.stringify(plan));
  });

  it("reads a group's offer view by the group's primary key, its enrolments by group and offer, its activations by group", async () => {
    const plan = await genericPlan(GROUP_OFFER_VIEW.text, ['iss_x', 'chg_x', '{ofr_x,ofr_y}']);
    assert.deepEqual(indexesOn(plan, 'cardholder_group'), ['cardholder_group_pkey'], JSON.stringify(plan));
    // Only the page's offers of the group, by the group's index (which carries the offer and the
    // arm, so a table whose pages are all visible is read from the index alone).
    assert.deepEqual(indexesOn(plan, 'offer_enrolment'), ['offer_enrolment_chg_id_offer_id_idx'], JSON.stringify(plan));
    const enrolments = JSON.stringify(scansOf(plan, 'offer_enrolment'));
    assert.match(enrolments, /offer_id = ANY/, enrolments);
    for (const scan of scansOf(plan, 'activation'))
      assert.notEqual(scan['Node Type'], 'Seq Scan', JSON.stringify(scan));
  });

  it("reads a group's ranked view by the group's keys alone: its enrolments, activations and history by its id", async () => {
    const plan = await genericPlan(GROUP_RANKED_VIEW.text, ['iss_x', 'chg_x', '{ofr_x,ofr_y}', '-1']);
    assert.deepEqual(indexesOn(plan, 'cardholder_group'), ['cardholder_group_pkey'], JSON.stringify(plan));
    // Only the guessed reach's enrolments, as the plain view reads the page's.
    assert.deepEqual(indexesOn(plan, 'offer_enrolment'), ['offer_enrolment_chg_id_offer_id_idx'], JSON.stringify(plan));
    assert.match(JSON.stringify(scansOf(plan, 'offer_enrolment')), /offer_id = ANY/);
    // The group's history rows by the primary key's leading column (three times: for their sum,
    // for the offers of its merchants, and for the history itself), each merchant's category and
    // offers by its key.
    assert.deepEqual(
      indexesOn(plan, 'chg_merchant_history'),
      ['chg_merchant_history_pkey', 'chg_merchant_history_pkey', 'chg_merchant_history_pkey'],
      JSON.stringify(plan),
    );
    assert.deepEqual(indexesOn(plan, 'offer'), ['offer_merchant_id_idx'], JSON.stringify(plan));
    for (const relation of ['activation', 'merchant'])
      for (const scan of scansOf(plan, relation)) assert.notEqual(scan['Node Type'], 'Seq Scan', JSON.stringify(scan));
  });

  it("reads a group's own view, every enrolment of the page known, without touching its enrolments", async () => {
    const plan = await genericPlan(GROUP_OWN_VIEW.text, ['iss_x', 'chg_x']);
    assert.deepEqual(indexesOn(plan, 'cardholder_group'), ['cardholder_group_pkey'], JSON.stringify(plan));
    assert.deepEqual(scansOf(plan, 'offer_enrolment'), [], JSON.stringify(plan));
    for (const scan of scansOf(plan, 'activation'))
      assert.notEqual(scan['Node Type'], 'Seq Scan', JSON.stringify(scan));
  });

  it('reads a kept ranked view with the enrolments named, or none, and the history by its key twice', async () => {
    for (const [statement, parameters, enrolments] of [
      [GROUP_RANKED_KEPT_VIEW, ['iss_x', 'chg_x', '{ofr_x}', '3'], ['offer_enrolment_chg_id_offer_id_idx']],
      [GROUP_RANKED_OWN_VIEW, ['iss_x', 'chg_x', '3'], []],
    ] as const) {
      const plan = await genericPlan(statement.text, [...parameters]);
      assert.deepEqual(indexesOn(plan, 'cardholder_group'), ['cardholder_group_pkey'], JSON.stringify(plan));
      assert.deepEqual(indexesOn(plan, 'offer_enrolment'), enrolments, JSON.stringify(plan));
      // Its sum and, when that moved, the history itself: no offers of its merchants (a guess
      // only a group with nothing kept needs).
      assert.deepEqual(
        indexesOn(plan, 'chg_merchant_history'),
        ['chg_merchant_history_pkey', 'chg_merchant_history_pkey'],
        JSON.stringify(plan),
      );
      assert.deepEqual(scansOf(plan, 'offer'), [], JSON.stringify(plan));
    }
  });

  it("reads the enrolments a ranked page reaches beyond its guess by the group's index", async () => {
    const plan = await genericPlan(GROUP_ENROLMENTS.text, ['chg_x', '{ofr_x,ofr_y}']);
    assert.deepEqual(indexesOn(plan, 'offer_enrolment'), ['offer_enrolment_chg_id_offer_id_idx'], JSON.stringify(plan));
    assert.match(JSON.stringify(scansOf(plan, 'offer_enrolment')), /offer_id = ANY/);
  });

  it("resolves an ingestion batch's cards and cardholders by primary key or by the issuer's ids, never by issuer alone", async () => {
    const plan = await genericPlan(CARD_DIRECTORY.text, ['iss_x', '{ch_x}', '{c-1}', '{card_x}', '{k-1}']);
    for (const relation of ['cardholder', 'card']) {
      const scans = scansOf(plan, relation);
      assert.equal(scans.length, 2, JSON.stringify(plan));
      for (const scan of scans) {
        const condition = scan['Index Cond'] ?? scan['Recheck Cond'] ?? '';
        // An index read must name the reference; a sequential scan is what an empty table gets.
        if (scan['Node Type'] !== 'Seq Scan')
          assert.match(condition, /(id|external_id) = ANY/, `${relation}: ${JSON.stringify(scan)}`);
      }
    }
  });
});

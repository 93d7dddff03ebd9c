// What SPEC.md section 6 recommends a receiver keep per webhook: webhookId, type, receive
// timestamp, signature verification result, processing status and the source ids of data.
// In memory, optionally mirrored to a JSON file; a real receiver would use its database
// with a unique key on webhookId.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';

export interface ReceivedWebhook {
  webhookId: string;
  type: string;
  receivedAt: string;
  signatureVerified: boolean;
  processingStatus: 'processed' | 'failed';
  sourceIds: Record<string, unknown>;
}

/** The data fields that name source records (the audit chain auth_/txn_ → brevt_ → rg_). */
const SOURCE_ID_FIELDS = [
  'chgId',
  'authorizationId',
  'transactionId',
  'externalId',
  'merchantId',
  'rewardEventIds',
  'rewardGrantIds',
];

export function sourceIdsOf(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(SOURCE_ID_FIELDS.filter((f) => data[f] !== undefined).map((f) => [f, data[f]]));
}

export class WebhookStore {
  private readonly byId = new Map<string, ReceivedWebhook>();

  constructor(private readonly file?: string) {
    if (file && existsSync(file)) {
      for (const row of JSON.parse(readFileSync(file, 'utf8')) as ReceivedWebhook[]) this.byId.set(row.webhookId, row);
    }
  }

  get(webhookId: string): ReceivedWebhook | undefined {
    return this.byId.get(webhookId);
  }

  put(row: ReceivedWebhook): void {
    this.byId.set(row.webhookId, row);
    if (this.file) writeFileSync(this.file, JSON.stringify([...this.byId.values()], null, 2));
  }

  all(): ReceivedWebhook[] {
    return [...this.byId.values()];
  }
}

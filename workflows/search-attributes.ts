// Defined here, beside the workflows that set them, since workflow code may import only
// deterministic modules; the worker and clients import them from here too.
// Custom search attributes that let operators find any transaction in the Temporal UI
// (DESIGN.md, Transaction lifecycle). The dev server registers them at start; a cluster
// operator registers them once with `temporal operator search-attribute create`.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const RewardsIssuerId = defineSearchAttributeKey('RewardsIssuerId', SearchAttributeType.KEYWORD);
export const RewardsChgId = defineSearchAttributeKey('RewardsChgId', SearchAttributeType.KEYWORD);
// A list: one purchase carries its authorization's auth_ id and its settlement's txn_ ids.
export const RewardsTransactionId = defineSearchAttributeKey('RewardsTransactionId', SearchAttributeType.KEYWORD_LIST);
export const RewardsMerchantId = defineSearchAttributeKey('RewardsMerchantId', SearchAttributeType.KEYWORD);
export const RewardsStatus = defineSearchAttributeKey('RewardsStatus', SearchAttributeType.KEYWORD);

/** Name → type, in the form the dev server's `--search-attribute` flag takes. */
export const SEARCH_ATTRIBUTE_DECLARATIONS: Record<string, 'Keyword' | 'KeywordList'> = {
  RewardsIssuerId: 'Keyword',
  RewardsChgId: 'Keyword',
  RewardsTransactionId: 'KeywordList',
  RewardsMerchantId: 'Keyword',
  RewardsStatus: 'Keyword',
};

// The operator audit log's writer lives in core/domain/audit.ts, shared with the customer-service
// postings that write their entries beside their money; the operator routes use it from here.
export { recordAudit, type AuditEntry } from '../../core/domain/audit';

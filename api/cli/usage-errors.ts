/** Errors of the operators' CLI commands: a usage error exits 2, a failed command exits 1. */
export class UsageError extends Error {}
export class FailedError extends Error {}

// Constants of a guest pass that the event schemas, the create-pass request and the
// guest-invites decider all use. Their own module, below those, so none imports another for them.

/** Public id of a pass: `gst_` + 128 random bits as lowercase hex. */
export const PASS_PUBLIC_ID_PATTERN = '^gst_[0-9a-f]{32}$';

/** The most passes one create request (one batch) may hold. */
export const MAX_PASSES_PER_BATCH = 10;

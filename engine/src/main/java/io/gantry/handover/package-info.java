/**
 * The take-over of a running Gantry by a new one on the same data directory ({@code gantry run --take-over}):
 * the versioned protocol ({@link io.gantry.handover.HandOverProtocol}), the running Gantry's end
 * ({@link io.gantry.handover.HandOverSocket}, which lends what its {@link io.gantry.handover.HandOverSocket.Lender}
 * holds) and the new Gantry's end ({@link io.gantry.handover.TakeOver}). What moves today is the listening socket
 * and the data directory; client sessions are drained by the old Gantry as on SIGTERM (docs/ARCHITECTURE.md).
 */
package io.gantry.handover;

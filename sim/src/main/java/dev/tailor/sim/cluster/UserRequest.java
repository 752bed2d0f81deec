package dev.tailor.sim.cluster;

/** One user request, from the ingress to the entry component and back; linked while in flight. */
final class UserRequest {

    final long startNanos;
    final boolean measured;
    /** A call of it was lost to a crash: it ends with an error. */
    boolean failed;

    UserRequest previous;
    UserRequest next;

    UserRequest(long startNanos, boolean measured) {
        this.startNanos = startNanos;
        this.measured = measured;
    }
}

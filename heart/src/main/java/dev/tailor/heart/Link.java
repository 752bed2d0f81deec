package dev.tailor.heart;

/**
 * A candidate link of one call edge's flow problem: caller node → callee group.
 *
 * @param from        caller node
 * @param to          callee node
 * @param group       callee group id (equal to {@code to} under node grouping)
 * @param delayMillis one-way delay used as the link's cost, in milliseconds
 * @param assumed     true when the delay was not measured and was filled in
 */
public record Link(String from, String to, String group, double delayMillis, boolean assumed) {

    @Override
    public String toString() {
        String target = group.equals(to) ? to : to + "/" + group;
        return from + "->" + target + " (" + format(delayMillis) + " ms" + (assumed ? ", assumed" : "") + ")";
    }

    static String format(double millis) {
        if (millis >= 100) {
            return String.format(java.util.Locale.ROOT, "%.0f", millis);
        }
        if (millis >= 10) {
            return String.format(java.util.Locale.ROOT, "%.1f", millis);
        }
        return String.format(java.util.Locale.ROOT, "%.3g", millis);
    }
}

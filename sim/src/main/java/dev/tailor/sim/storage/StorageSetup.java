package dev.tailor.sim.storage;

import dev.tailor.admission.IoCostModel;
import dev.tailor.admission.IoKind;
import dev.tailor.common.IoErrors;
import dev.tailor.common.Numbers;
import dev.tailor.common.Problem;
import dev.tailor.datasets.BlockTrace;
import dev.tailor.datasets.CloudPhysicsVolumes;
import dev.tailor.sim.ScenarioException;
import dev.tailor.sim.des.RandomStreams;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A scenario made ready to run: the backend model (explicit or fitted), the cost model derived from
 * it, every tenant with its workload, rate, bursts and commitment, and each proxy's capacity. Built
 * once per scenario (reading traces and fitting the backend) and shared, read-only, by the runs of
 * every policy. Immutable.
 *
 * <h2>How numbers are set (our reading; the paper gives no procedure)</h2>
 * <ul>
 *   <li><b>Cost units.</b> Admission's cost model is derived from the backend, as blk-iocost derives
 *       its own from a device profile: an I/O costs its mean service time ÷ the backend's
 *       parallelism, in ns, so the backend kept busy serves exactly 10⁹ cost units per second
 *       whatever the request mix ({@link #costModel(BackendModel)}).</li>
 *   <li><b>Capacity.</b> The proxies' budgets add up to what the backend serves, 10⁹ cost units per
 *       second × {@code admission.capacityFraction} (default 1), split over the proxies in proportion
 *       to their tenants' mean demand, bursts included.</li>
 *   <li><b>Rates.</b> Each tenant's mean rate outside bursts is its {@code requestsPerSecond} or its
 *       CloudPhysics draw ({@link TenantRates}); with {@code baseUtilizationPercent} all are scaled
 *       so that the backend is that busy outside bursts.</li>
 *   <li><b>Commitments.</b> A tenant's commitment is {@code commitmentRatio} × its mean cost rate
 *       outside bursts, in cost units per second: admission's baseline, static-cap's cap and
 *       mclock's reservation and weight alike.</li>
 * </ul>
 */
public final class StorageSetup {

    /** Resolves a path under the shared data folder, or throws naming every place it looked. */
    @FunctionalInterface
    public interface DataFiles {
        /**
         * @throws IllegalArgumentException when the file is not there; the message lists the paths
         *                                  tried and how to point at the data ({@code TAILOR_DATA_DIR})
         */
        Path require(String relative);
    }

    /**
     * One tenant.
     *
     * @param name                         unique name
     * @param group                        the scenario's tenant group
     * @param proxy                        the proxy it uses
     * @param hot                          ground truth: the tenant has bursts configured
     * @param requestsPerSecond            mean rate outside bursts
     * @param bursts                       its bursts, or {@code null}
     * @param trace                        the excerpt (or synthetic trace) replayed
     * @param meanCostUnits                mean cost of one of its requests (≈ ns of backend time ÷
     *                                     parallelism)
     * @param commitmentCostUnitsPerSecond its commitment
     */
    public record Tenant(
            String name,
            String group,
            int proxy,
            boolean hot,
            double requestsPerSecond,
            TenantStream.Bursts bursts,
            Excerpt trace,
            double meanCostUnits,
            double commitmentCostUnitsPerSecond) {

        /** Mean rate with bursts: the rate × (1 + burst share of time × (multiplier − 1)). */
        public double meanRequestsPerSecondWithBursts() {
            if (bursts == null) {
                return requestsPerSecond;
            }
            double burstMillis = (bursts.minMillis() + bursts.maxMillis()) / 2;
            double share = burstMillis / (bursts.meanGapSeconds() * 1e3 + burstMillis);
            return requestsPerSecond * (1 + share * (bursts.multiplier() - 1));
        }
    }

    /** Cost units per second a backend kept busy serves, by construction of {@link #costModel}. */
    public static final double BACKEND_COST_UNITS_PER_SECOND = 1e9;
    /**
     * The most load outside bursts a scenario may offer, as a share of what the backend serves: 10, i.e.
     * 1000 %, the bound of {@code baseUtilizationPercent} too. Beyond it every policy's queue only grows
     * in proportion to time, so a run measures the length of its queue, not a policy; and every
     * unfinished request is held until the run ends, so memory grows with the excess.
     */
    public static final double MAX_OFFERED_LOAD = 10;

    private final StorageScenario scenario;
    private final BackendModel backend;
    private final String backendSource;
    private final IoCostModel costModel;
    private final List<Tenant> tenants;
    private final double[] proxyCapacity;
    private final Double burstMultiplier;
    private final List<String> notes;
    /** The note of {@link #budgetNote}, one of {@link #notes}, or {@code null}. */
    private final String budgetNote;
    /** The note of {@link #sharesNote} for runs with adapted budgets, one of {@link #notes}, or {@code null}. */
    private final String sharesNote;

    /** The same note for runs whose segment-admission policies all keep fixed shares, or {@code null}. */
    private final String fixedSharesNote;

    private StorageSetup(
            StorageScenario scenario,
            BackendModel backend,
            String backendSource,
            List<Tenant> tenants,
            Double burstMultiplier,
            List<String> baseNotes) {
        this.scenario = scenario;
        this.backend = backend;
        this.backendSource = backendSource;
        this.costModel = costModel(backend);
        this.burstMultiplier = burstMultiplier;
        double[] demand = new double[scenario.proxies()];
        double total = 0;
        double base = 0;
        for (Tenant t : tenants) {
            double d = t.meanRequestsPerSecondWithBursts() * t.meanCostUnits();
            demand[t.proxy()] += d;
            total += d;
            base += t.requestsPerSecond() * t.meanCostUnits();
        }
        this.proxyCapacity = new double[scenario.proxies()];
        for (int p = 0; p < demand.length; p++) {
            proxyCapacity[p] = BACKEND_COST_UNITS_PER_SECOND
                    * scenario.admission().capacityFraction()
                    * (total > 0 ? demand[p] / total : 1.0 / demand.length);
            // Admission needs at least one cost unit per interval (its budget C is a whole number).
            double intervalSeconds = Math.max(1_000, Math.round(scenario.intervalMillis() * 1e6)) / 1e9;
            if (demand[p] > 0 && Math.floor(proxyCapacity[p] * intervalSeconds) < 1) {
                throw new ScenarioException(
                        scenario.name(),
                        List.of(new Problem(
                                "admission.capacityFraction",
                                scenario.admission().capacityFraction(),
                                String.format(
                                        Locale.ROOT,
                                        "a budget of at least 1 cost unit per interval; with intervalMillis %s it"
                                                + " gives proxy %d %.3g (raise either)",
                                        Numbers.written(scenario.intervalMillis()),
                                        p,
                                        proxyCapacity[p] * intervalSeconds))));
            }
        }
        // Fair-share commitments (NaN until now): the proxy's capacity ÷ its tenants.
        int[] perProxy = new int[scenario.proxies()];
        tenants.forEach(t -> perProxy[t.proxy()]++);
        List<Tenant> committed = new ArrayList<>();
        for (Tenant t : tenants) {
            committed.add(
                    !Double.isNaN(t.commitmentCostUnitsPerSecond())
                            ? t
                            : new Tenant(
                                    t.name(),
                                    t.group(),
                                    t.proxy(),
                                    t.hot(),
                                    t.requestsPerSecond(),
                                    t.bursts(),
                                    t.trace(),
                                    t.meanCostUnits(),
                                    proxyCapacity[t.proxy()] / perProxy[t.proxy()]));
        }
        this.tenants = List.copyOf(committed);
        List<String> all = new ArrayList<>(baseNotes);
        all.add(String.format(
                Locale.ROOT,
                "offered load: %.1f %% of the backend outside bursts, %.1f %% on average" + " with bursts%s",
                100 * base / BACKEND_COST_UNITS_PER_SECOND,
                100 * total / BACKEND_COST_UNITS_PER_SECOND,
                burstMultiplier == null ? "" : " (burst multiplier " + Numbers.format(burstMultiplier) + ")"));
        this.budgetNote = budgetNote(scenario, tenants).orElse(null);
        if (budgetNote != null) {
            all.add(budgetNote);
        }
        this.sharesNote = sharesNote(tenants, true).orElse(null);
        this.fixedSharesNote = sharesNote(tenants, false).orElse(null);
        if (sharesNote != null) {
            all.add(sharesNote);
        }
        double[] commitments = new double[scenario.proxies()];
        committed.forEach(t -> commitments[t.proxy()] += t.commitmentCostUnitsPerSecond());
        List<Integer> overcommitted = new ArrayList<>();
        int worstProxy = -1;
        for (int p = 0; p < commitments.length; p++) {
            if (commitments[p] > proxyCapacity[p] * (1 + 1e-9)) {
                overcommitted.add(p);
                if (worstProxy < 0
                        || commitments[p] / proxyCapacity[p] > commitments[worstProxy] / proxyCapacity[worstProxy]) {
                    worstProxy = p;
                }
            }
        }
        if (overcommitted.size() == 1) {
            all.add(String.format(
                    Locale.ROOT,
                    "commitments on proxy %d add up to %.0f %% of its capacity: segment admission's baseline"
                            + " guarantee and mclock's reservations scale them down to it together",
                    worstProxy,
                    100 * commitments[worstProxy] / proxyCapacity[worstProxy]));
        } else if (overcommitted.size() > 1) {
            // One line however many proxies: a scenario may have up to 1,000.
            all.add(String.format(
                    Locale.ROOT,
                    "commitments on %d proxies add up to more than their capacity (up to %.0f %%, proxy %d):"
                            + " segment admission's baseline guarantee and mclock's reservations scale them down to"
                            + " it together",
                    overcommitted.size(),
                    100 * commitments[worstProxy] / proxyCapacity[worstProxy],
                    worstProxy));
        }
        this.notes = List.copyOf(all);
    }

    /**
     * A note when some proxy's budget per interval (its capacity × Δ) is smaller than the cost of one of its
     * tenants' requests: segment admission then admits such a request beyond its tenant's baseline on an
     * advance that later budgets repay, one at a time per proxy ({@code overlapping-advances}: while the
     * advances its proxy has outstanding are less than its cost), and without advances (the paper's variant, {@code no-oversize-advance}) collects its cost from the pools
     * over several intervals (docs/admission-record.md, Requests larger than a window of baseline); empty otherwise.
     */
    private Optional<String> budgetNote(StorageScenario scenario, List<Tenant> tenants) {
        double intervalSeconds = Math.max(1_000, Math.round(scenario.intervalMillis() * 1e6)) / 1e9;
        Map<Excerpt, Double> largestOfExcerpt = new IdentityHashMap<>();
        double[] largest = new double[scenario.proxies()];
        for (Tenant t : tenants) {
            double c = largestOfExcerpt.computeIfAbsent(
                    t.trace(),
                    e -> e instanceof SyntheticExcerpt synthetic
                            ? synthetic.largestCostUnits()
                            : largestCostUnits(e, costModel, scenario.diskSizeBytes()));
            largest[t.proxy()] = Math.max(largest[t.proxy()], c);
        }
        int over = 0;
        int worst = -1;
        for (int p = 0; p < largest.length; p++) {
            double budget = proxyCapacity[p] * intervalSeconds;
            if (largest[p] > budget) {
                over++;
                if (worst < 0 || largest[p] / budget > largest[worst] / (proxyCapacity[worst] * intervalSeconds)) {
                    worst = p;
                }
            }
        }
        if (over == 0) {
            return Optional.empty();
        }
        double budget = proxyCapacity[worst] * intervalSeconds;
        return Optional.of(String.format(
                Locale.ROOT,
                "on %d of %d proxies a request can cost more than the proxy's budget per interval (proxy %d: %s"
                        + " cost units per %s ms, its largest request %s): segment admission admits such a request"
                        + " beyond its tenant's baseline on its turn, one at a time per proxy (overlapping-advances:"
                        + " while its proxy's advances outstanding are less than its cost), and later budgets repay"
                        + " what it lacked; segment-admission-paper and"
                        + " no-oversize-advance hold it for %d intervals or more while it collects its cost (fewer"
                        + " proxies or a longer intervalMillis shorten that)",
                over,
                largest.length,
                worst,
                String.format(Locale.ROOT, "%,d", (long) Math.floor(budget)),
                Numbers.written(scenario.intervalMillis()),
                String.format(Locale.ROOT, "%,d", (long) Math.ceil(largest[worst])),
                (long) Math.ceil(largest[worst] / budget)));
    }

    /**
     * A note when two or more proxies with tenants share the backend: each budgets at least a share of it,
     * grown from the backend's latency ({@code adapted}) or fixed, with which a busy proxy can hold work
     * while another proxy's share expires unused (docs/admission.md, Several proxies on one backend:
     * latency-adaptive budgets); empty otherwise.
     */
    private Optional<String> sharesNote(List<Tenant> tenants, boolean adapted) {
        boolean[] used = new boolean[proxyCapacity.length];
        tenants.forEach(t -> used[t.proxy()] = true);
        List<Double> shares = new ArrayList<>();
        for (int p = 0; p < used.length; p++) {
            if (used[p]) {
                shares.add(100
                        * proxyCapacity[p]
                        / (BACKEND_COST_UNITS_PER_SECOND * scenario.admission().capacityFraction()));
            }
        }
        if (shares.size() < 2) {
            return Optional.empty();
        }
        String listed = shares.size() <= 8
                ? String.join(" / ", shares.stream().map(StorageSetup::percent).toList()) + " %"
                : percent(java.util.Collections.min(shares)) + "–" + percent(java.util.Collections.max(shares))
                        + " % each";
        String reference = " (docs/admission.md, Several proxies on one backend: latency-adaptive budgets)";
        return Optional.of(
                adapted
                        ? String.format(
                                Locale.ROOT,
                                "%d proxies share one backend, each budgeting at least a share of it (%s, set from"
                                        + " their tenants' mean demand) and more while its requests queue little there"
                                        + " (admission.targetSlowdown %s); fixed-shares, spare-exchange and"
                                        + " segment-admission-paper keep the fixed shares%s",
                                shares.size(),
                                listed,
                                Numbers.written(scenario.admission().targetSlowdown()),
                                reference)
                        : String.format(
                                Locale.ROOT,
                                "%d proxies share one backend, each budgeting a fixed share of it (%s, set from their"
                                        + " tenants' mean demand): a busy proxy holds work while another's share"
                                        + " expires unused%s",
                                shares.size(),
                                listed,
                                reference));
    }

    /** A share in % as the notes write it: to one decimal, without a trailing ".0" (12.5, 25, 6.3). */
    private static String percent(double value) {
        String tenth = String.format(Locale.ROOT, "%.1f", value);
        return tenth.endsWith(".0") ? tenth.substring(0, tenth.length() - 2) : tenth;
    }

    /** The largest cost of one of the excerpt's requests as a tenant replays it. */
    private static double largestCostUnits(Excerpt trace, IoCostModel cost, long diskBytes) {
        double largest = 0;
        Excerpt.Cursor cursor = trace.cursor(0);
        for (int i = 0; i < trace.size(); i++) {
            largest = Math.max(largest, costUnits(cursor.next(), cost, diskBytes));
        }
        return largest;
    }

    /**
     * Builds the setup of {@code scenario}: reads its traces and CloudPhysics rates, fits the backend
     * if asked, draws the rates. Every problem found on the way is reported at once, by its field in the
     * scenario: a data file that is missing, unreadable or not in its format ({@code traces.NAME.file},
     * {@code rates.cloudPhysicsFile}), a trace the backend cannot be fitted to ({@code backend.calibrateFrom}),
     * a baseline above the fitted backend's capacity ({@code tenants[i].baseline.iops}), a load no request
     * makes ({@code baseUtilizationPercent}).
     *
     * @throws ScenarioException with the {@link ScenarioException#problems() problems}, by field path
     */
    public static StorageSetup build(StorageScenario scenario, DataFiles data) {
        List<Problem> problems = scenario.problems();
        if (!problems.isEmpty()) {
            throw new ScenarioException(scenario.name(), problems);
        }
        RandomStreams streams = new RandomStreams(scenario.seed());
        List<String> notes = new ArrayList<>();
        Map<String, BlockTrace> traces = new HashMap<>();
        List<String> wanted = new ArrayList<>();
        for (StorageScenario.TenantSpec group : scenario.tenants()) {
            wanted.addAll(group.traces());
        }
        if (scenario.backend().calibrateFrom() != null) {
            wanted.add(scenario.backend().calibrateFrom());
        }
        for (String name : wanted) {
            if (!traces.containsKey(name)) {
                BlockTrace trace = readTrace(scenario, name, data, problems);
                if (trace != null) {
                    traces.put(name, trace);
                }
            }
        }
        BackendModel backend = null;
        String source = null;
        if (scenario.backend().calibrateFrom() != null) {
            String name = scenario.backend().calibrateFrom();
            BlockTrace trace = traces.get(name);
            if (trace != null) {
                try {
                    BackendCalibration.Result fit = BackendCalibration.fit(trace);
                    backend = fit.model();
                    source = "fitted to " + scenario.traces().get(name).file() + ": " + fit.summary();
                } catch (IllegalArgumentException e) {
                    problems.add(new Problem(
                            "backend.calibrateFrom",
                            "\"" + name + "\": " + e.getMessage(),
                            "a trace with enough device latencies to fit the backend to"));
                }
            }
        } else {
            backend = scenario.backend().model();
            source = "given in the scenario";
        }
        if (backend != null) {
            problems.addAll(scenario.baselineProblems(costModel(backend)));
        }
        int n = scenario.tenantCount();
        double[] weights = new double[n];
        if (scenario.rates() != null) {
            StorageScenario.RatesSpec r = scenario.rates();
            int large = r.largeClients() == null ? 3 : r.largeClients();
            double share = r.largeShare() == null ? 0.63 : r.largeShare();
            CloudPhysicsVolumes volumes = null;
            try {
                volumes = CloudPhysicsVolumes.read(data.require(r.cloudPhysicsFile()));
            } catch (IOException | RuntimeException e) {
                problems.add(fileProblem("rates.cloudPhysicsFile", r.cloudPhysicsFile(), e, CLOUD_PHYSICS));
            }
            if (volumes != null) {
                weights = TenantRates.draw(volumes, n, 1.0, large, share, streams.stream("rates"));
                notes.add(String.format(
                        Locale.ROOT,
                        "rates: %d tenants drawn from %s, the largest %d carrying %.0f %%",
                        n,
                        r.cloudPhysicsFile(),
                        large,
                        100 * share));
            }
        }
        if (!problems.isEmpty()) {
            throw new ScenarioException(scenario.name(), problems);
        }
        notes.add(0, "backend " + source);
        IoCostModel cost = costModel(backend);

        Map<Excerpt, Double> meanCosts = new HashMap<>();
        Map<BlockTrace, Excerpt> excerpts = new HashMap<>();
        List<String> names = new ArrayList<>();
        List<StorageScenario.TenantSpec> groups = new ArrayList<>();
        List<Excerpt> tenantTraces = new ArrayList<>();
        int index = 0;
        for (StorageScenario.TenantSpec group : scenario.tenants()) {
            for (int i = 0; i < group.count(); i++) {
                String name = group.count() == 1 ? group.name() : group.name() + "-" + i;
                Excerpt trace = group.synthetic() != null
                        ? synthetic(name, group.synthetic(), scenario.diskSizeBytes(), streams, cost)
                        : excerpts.computeIfAbsent(
                                traces.get(group.traces().get(i % group.traces().size())), Excerpt::of);
                if (scenario.rates() == null) {
                    weights[index] = group.requestsPerSecond();
                }
                names.add(name);
                groups.add(group);
                tenantTraces.add(trace);
                index++;
            }
        }
        double[] meanCost = new double[n];
        double baseLoad = 0;
        for (int i = 0; i < n; i++) {
            Excerpt trace = tenantTraces.get(i);
            meanCost[i] = trace instanceof SyntheticExcerpt synthetic
                    ? synthetic.meanCostUnits()
                    : meanCosts.computeIfAbsent(trace, t -> meanCostUnits(t, cost, scenario.diskSizeBytes()));
            baseLoad += weights[i] * meanCost[i] / BACKEND_COST_UNITS_PER_SECOND;
        }
        if (scenario.baseUtilizationPercent() != null && !(baseLoad > 0)) {
            throw new ScenarioException(
                    scenario.name(),
                    List.of(new Problem(
                            "baseUtilizationPercent",
                            scenario.baseUtilizationPercent(),
                            "a load the tenants' requests can make; they take no backend time (requests that cost"
                                    + " something, e.g. backend.writeBaseMicros > 0 for writes)")));
        }
        double scale =
                scenario.baseUtilizationPercent() == null ? 1 : scenario.baseUtilizationPercent() / 100 / baseLoad;
        if (scenario.baseUtilizationPercent() == null && baseLoad > MAX_OFFERED_LOAD) {
            throw new ScenarioException(scenario.name(), offeredLoadProblems(scenario, baseLoad));
        }
        List<Tenant> tenants = new ArrayList<>();
        int roundRobin = 0;
        for (int i = 0; i < n; i++) {
            StorageScenario.TenantSpec group = groups.get(i);
            int proxy = group.proxy() != null ? group.proxy() : roundRobin++ % scenario.proxies();
            double rate = weights[i] * scale;
            TenantStream.Bursts bursts = group.bursts() == null
                    ? null
                    : new TenantStream.Bursts(
                            group.bursts().meanGapSeconds(),
                            group.bursts().minMillis(),
                            group.bursts().maxMillis(),
                            group.bursts().multiplier());
            double commitment =
                    group.commitmentRatio() == null ? Double.NaN : group.commitmentRatio() * rate * meanCost[i];
            if (group.baseline() != null) {
                // At most the backend's capacity: checked above (StorageScenario.baselineProblems).
                commitment = baselineCostUnitsPerSecond(group.baseline(), cost);
            }
            tenants.add(new Tenant(
                    names.get(i),
                    group.name(),
                    proxy,
                    bursts != null,
                    rate,
                    bursts,
                    tenantTraces.get(i),
                    meanCost[i],
                    commitment));
        }
        boolean[] used = new boolean[scenario.proxies()];
        tenants.forEach(t -> used[t.proxy()] = true);
        String idle = idleProxiesNote(used);
        if (idle != null) {
            notes.add(idle);
        }
        return new StorageSetup(scenario, backend, source, tenants, null, notes);
    }

    /**
     * One note for every proxy without tenants, their numbers as runs ({@code proxies 1–999 (999 of 1000) have no
     * tenants: they stay idle}), not a line each: a scenario may have up to 1,000 proxies. Null when every proxy has a
     * tenant.
     */
    static String idleProxiesNote(boolean[] used) {
        List<String> runs = new ArrayList<>();
        int idle = 0;
        for (int p = 0; p < used.length; p++) {
            if (used[p]) {
                continue;
            }
            int last = p;
            while (last + 1 < used.length && !used[last + 1]) {
                last++;
            }
            runs.add(last == p ? Integer.toString(p) : last == p + 1 ? p + ", " + last : p + "–" + last);
            idle += last - p + 1;
            p = last;
        }
        if (idle == 0) {
            return null;
        }
        if (idle == 1) {
            return "proxy " + runs.get(0) + " has no tenants: it stays idle";
        }
        return "proxies " + String.join(", ", runs) + " (" + idle + " of " + used.length
                + ") have no tenants: they stay idle";
    }

    /**
     * The problems of a scenario whose tenants' rates offer {@code load} × what the backend serves
     * (outside bursts), above {@link #MAX_OFFERED_LOAD}: one per tenant group giving a rate, named
     * {@code tenants[i].requestsPerSecond}.
     */
    private static List<Problem> offeredLoadProblems(StorageScenario scenario, double load) {
        List<Problem> problems = new ArrayList<>();
        String expected = String.format(
                Locale.ROOT,
                "rates that together offer at most %s %% of the backend outside bursts; these offer %.1f %%:"
                        + " beyond that every policy's queue only grows and the run measures its length"
                        + " (or set baseUtilizationPercent)",
                Numbers.format(100 * MAX_OFFERED_LOAD),
                100 * load);
        for (int i = 0; i < scenario.tenants().size(); i++) {
            Double rate = scenario.tenants().get(i).requestsPerSecond();
            if (rate != null && rate > 0) {
                problems.add(new Problem("tenants[" + i + "].requestsPerSecond", rate, expected));
            }
        }
        return problems;
    }

    /**
     * The runs this scenario asks for: one per {@code burstMultipliers} value (every bursty tenant's
     * multiplier set to it), or this setup alone.
     */
    public List<StorageSetup> variants() {
        if (scenario.burstMultipliers().isEmpty()) {
            return List.of(this);
        }
        List<StorageSetup> variants = new ArrayList<>();
        List<String> baseNotes = notes.subList(0, notes.size() - 1);
        for (double m : scenario.burstMultipliers()) {
            List<Tenant> changed = new ArrayList<>();
            for (Tenant t : tenants) {
                TenantStream.Bursts b = t.bursts();
                changed.add(
                        b == null
                                ? t
                                : new Tenant(
                                        t.name(),
                                        t.group(),
                                        t.proxy(),
                                        t.hot(),
                                        t.requestsPerSecond(),
                                        new TenantStream.Bursts(b.meanGapSeconds(), b.minMillis(), b.maxMillis(), m),
                                        t.trace(),
                                        t.meanCostUnits(),
                                        fairShare(t) ? Double.NaN : t.commitmentCostUnitsPerSecond()));
            }
            variants.add(new StorageSetup(scenario, backend, backendSource, changed, m, baseNotes));
        }
        return variants;
    }

    /** The provisioned baseline the scenario gives the tenant's group, or null (a ratio or the fair share). */
    public StorageScenario.BaselineSpec baseline(Tenant t) {
        for (StorageScenario.TenantSpec g : scenario.tenants()) {
            if (g != null && g.name().equals(t.group())) {
                return g.baseline();
            }
        }
        return null;
    }

    /** Whether the tenant's commitment is the fair-share default (its group gives no ratio). */
    private boolean fairShare(Tenant t) {
        return scenario.tenants().stream()
                .anyMatch(g -> g.name().equals(t.group()) && g.commitmentRatio() == null && g.baseline() == null);
    }

    /**
     * What a provisioned baseline costs per second in {@code cost}: {@code iops} reads carrying
     * {@code mibPerSecond} MiB, {@code iops × a + bytes × b} with the read coefficients.
     */
    static double baselineCostUnitsPerSecond(StorageScenario.BaselineSpec baseline, IoCostModel cost) {
        return baseline.iops() * cost.readBaseCostUnits()
                + baseline.mibPerSecond() * (1 << 20) * cost.readCostUnitsPerByte();
    }

    /**
     * The cost model of {@code backend}: an I/O costs its mean service time ÷ parallelism, in ns.
     * A backend kept busy therefore serves {@link #BACKEND_COST_UNITS_PER_SECOND} cost units per
     * second, for any mix of sizes and directions.
     */
    public static IoCostModel costModel(BackendModel backend) {
        double mean = Math.exp(backend.serviceSigma() * backend.serviceSigma() / 2);
        double perChannel = 1_000 * mean / backend.parallelism(); // µs of median → ns of mean ÷ k
        return new IoCostModel(
                backend.readBaseMicros() * perChannel,
                backend.readMicrosPerKiB() * perChannel / 1024,
                backend.writeBaseMicros() * perChannel,
                backend.writeMicrosPerKiB() * perChannel / 1024);
    }

    /** The trace {@code name} of the scenario, or null with its problem added to {@code problems}. */
    private static BlockTrace readTrace(StorageScenario scenario, String name, DataFiles data, List<Problem> problems) {
        StorageScenario.TraceSpec spec = scenario.traces().get(name);
        BlockTrace trace;
        try {
            trace = BlockTrace.read(data.require(spec.file()), StorageScenario.FORMATS.get(spec.format()));
        } catch (IOException | RuntimeException e) {
            problems.add(fileProblem(
                    "traces." + name + ".file",
                    spec.file(),
                    e,
                    "a block I/O trace in the " + spec.format() + " format"));
            return null;
        }
        Double granularity = spec.timestampGranularityMillis();
        return granularity == null || granularity == 0 ? trace : spread(trace, Math.round(granularity * 1e6));
    }

    /**
     * The data files {@code scenario} reads when it is built that are not there, as {@code data} says it:
     * each trace a tenant (of the scenario or of a mix) replays or the backend is fitted to
     * ({@code traces.NAME.file}), and the CloudPhysics series ({@code rates.cloudPhysicsFile}, or a mix's
     * own, {@code mixes[i].rates.cloudPhysicsFile}). Only whether they are there: what they hold is read
     * by {@link #build}. Files the scenario's {@link StorageScenario#problems() problems} leave unnamed are
     * skipped.
     */
    public static List<Problem> dataFileProblems(StorageScenario scenario, DataFiles data) {
        Set<String> names = new LinkedHashSet<>();
        List<StorageScenario.TenantSpec> groups = new ArrayList<>(scenario.tenants());
        for (StorageScenario.MixSpec mix : scenario.mixes()) {
            if (mix != null) {
                groups.addAll(mix.tenants());
            }
        }
        for (StorageScenario.TenantSpec group : groups) {
            if (group != null) {
                names.addAll(group.traces());
            }
        }
        if (scenario.backend() != null && scenario.backend().calibrateFrom() != null) {
            names.add(scenario.backend().calibrateFrom());
        }
        Set<Problem> problems = new LinkedHashSet<>();
        for (String name : names) {
            StorageScenario.TraceSpec spec = scenario.traces().get(name);
            if (spec != null && spec.file() != null && !spec.file().isBlank()) {
                String at = "traces." + name + ".file";
                there(data, at, spec.file(), "a block I/O trace in the " + spec.format() + " format", problems);
            }
        }
        String ratesFile = scenario.rates() == null ? null : scenario.rates().cloudPhysicsFile();
        if (scenario.mixes().isEmpty() && ratesFile != null && !ratesFile.isBlank()) {
            there(data, "rates.cloudPhysicsFile", ratesFile, CLOUD_PHYSICS, problems);
        }
        for (int k = 0; k < scenario.mixes().size(); k++) {
            StorageScenario.MixSpec mix = scenario.mixes().get(k);
            String own = mix == null || mix.rates() == null ? null : mix.rates().cloudPhysicsFile();
            if (own != null && !own.isBlank()) {
                there(data, "mixes[" + k + "].rates.cloudPhysicsFile", own, CLOUD_PHYSICS, problems);
            } else if (mix != null && own == null && ratesFile != null && !ratesFile.isBlank()) {
                there(data, "rates.cloudPhysicsFile", ratesFile, CLOUD_PHYSICS, problems);
            }
        }
        return List.copyOf(problems);
    }

    private static final String CLOUD_PHYSICS = "the CloudPhysics per-VM series";

    private static void there(DataFiles data, String field, String file, String expected, Set<Problem> problems) {
        try {
            data.require(file);
        } catch (RuntimeException e) {
            problems.add(fileProblem(field, file, e, expected));
        }
    }

    /**
     * A data file's problem, said for {@code field}: where it was looked for, or what is wrong in it, as the
     * data folder and the file's reader say it ({@code ... (expected: ...)}), else with {@code expected}.
     */
    private static Problem fileProblem(String field, String written, Exception e, String expected) {
        if (e instanceof IOException io) {
            return new Problem(field, written + ": cannot be read (" + IoErrors.reason(io) + ")", expected);
        }
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        int cut = message.lastIndexOf(" (expected: ");
        String said = cut > 0 && message.endsWith(")") ? message.substring(0, cut) : message;
        String wanted = cut > 0 && message.endsWith(")") ? message.substring(cut + 12, message.length() - 1) : expected;
        return new Problem(field, said.contains(written) ? said : written + ": " + said, wanted);
    }

    /**
     * The trace with the requests of each {@code stepNanos} step (by arrival time, from 0) spread
     * evenly over the step, in their order: request {@code i} of {@code n} in a step at
     * {@code step start + i × step ÷ n}. For traces whose timestamps are that coarse, where every
     * request of a step carries the step's start; the last step keeps its requests' span.
     */
    static BlockTrace spread(BlockTrace trace, long stepNanos) {
        List<BlockTrace.Request> in = trace.requests();
        List<BlockTrace.Request> out = new ArrayList<>(in.size());
        int i = 0;
        while (i < in.size()) {
            long step = in.get(i).arrivalNanos() / stepNanos;
            int j = i;
            while (j < in.size() && in.get(j).arrivalNanos() / stepNanos == step) {
                j++;
            }
            int n = j - i;
            for (int k = 0; k < n; k++) {
                BlockTrace.Request r = in.get(i + k);
                long at = step * stepNanos + (long) ((double) k * stepNanos / n);
                out.add(new BlockTrace.Request(
                        at, r.offsetBytes(), r.lengthBytes(), r.write(), r.deviceLatencyNanos(), r.submitNanos()));
            }
            i = j;
        }
        return BlockTrace.of(trace.file().toString(), out);
    }

    /** Mean cost of the excerpt's requests as a tenant replays them (sizes clipped to the disk). */
    static double meanCostUnits(Excerpt trace, IoCostModel cost, long diskBytes) {
        double sum = 0;
        Excerpt.Cursor cursor = trace.cursor(0);
        for (int i = 0; i < trace.size(); i++) {
            sum += costUnits(cursor.next(), cost, diskBytes);
        }
        return sum / trace.size();
    }

    /** A request's cost as a tenant replays it (its size clipped to the disk). */
    private static double costUnits(BlockTrace.Request r, IoCostModel cost, long diskBytes) {
        return cost.costUnits(r.write() ? IoKind.WRITE : IoKind.READ, Math.min(r.lengthBytes(), diskBytes));
    }

    /**
     * Poisson arrivals at 1,000/s (a replay stretches them to the tenant's rate), uniform offsets, from
     * the tenant's stream {@code synthetic-NAME}.
     */
    static Excerpt synthetic(
            String tenant,
            StorageScenario.SyntheticSpec spec,
            long diskBytes,
            RandomStreams streams,
            IoCostModel cost) {
        return new SyntheticExcerpt(
                tenant,
                spec.readFraction(),
                spec.sizeBytes(),
                diskBytes,
                () -> streams.stream("synthetic-" + tenant),
                r -> costUnits(r, cost, diskBytes));
    }

    public StorageScenario scenario() {
        return scenario;
    }

    public BackendModel backend() {
        return backend;
    }

    /** Where the backend's numbers come from, one line. */
    public String backendSource() {
        return backendSource;
    }

    /** The cost model every policy prices requests with ({@link #costModel(BackendModel)}). */
    public IoCostModel costModel() {
        return costModel;
    }

    public List<Tenant> tenants() {
        return tenants;
    }

    /** Budget of proxy {@code p}, cost units per second. */
    public double proxyCapacityCostUnitsPerSecond(int p) {
        return proxyCapacity[p];
    }

    /** The burst multiplier of this variant, or {@code null} when the scenario sweeps none. */
    public Double burstMultiplier() {
        return burstMultiplier;
    }

    /** Every assumption made building it, one line each. */
    public List<String> notes() {
        return notes;
    }

    /**
     * {@link #notes()} that concern a run of {@code policies}: without the notes on segment admission's budget
     * per interval and on the proxies' shares when none of them is a segment-admission policy (fifo, mclock, ...
     * have no budget), and with the note on fixed shares instead of adapted ones when none of them adapts its
     * budgets ({@code fixed-shares}, {@code spare-exchange}, {@code segment-admission-paper}).
     */
    public List<String> notes(Collection<String> policies) {
        boolean admission = policies.stream().anyMatch(SegmentAdmissionPolicy.NAMES::contains);
        boolean adapted = policies.stream()
                .anyMatch(p -> SegmentAdmissionPolicy.NAMES.contains(p) && SegmentAdmissionPolicy.adaptsBudget(p));
        if (admission && (sharesNote == null || adapted)) {
            return notes;
        }
        return notes.stream()
                .filter(note -> admission || !note.equals(budgetNote))
                .map(note -> note.equals(sharesNote) && admission ? fixedSharesNote : note)
                .filter(note -> admission || !note.equals(sharesNote))
                .toList();
    }

    /** The scenario's name with the variant, e.g. {@code burst-microbench ×8}. */
    public String label() {
        return scenario.name() + (burstMultiplier == null ? "" : " ×" + Numbers.format(burstMultiplier));
    }
}

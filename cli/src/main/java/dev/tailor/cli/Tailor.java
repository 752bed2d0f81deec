package dev.tailor.cli;

import dev.tailor.lab.LabException;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code tailor} command: cuts tail latency across microservice replicas (HEART) and in
 * shared block storage. Exit codes: 0 success, 1 failure while running, 2 bad input or usage.
 */
@Command(
        name = "tailor",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        description = {
            "Cuts tail latency where replicated services and shared block storage lose it.",
            "",
        },
        subcommands = {
            DemoCommand.class,
            HeartCommand.class,
            StorageCommand.class,
            NbdCommand.class,
            CommandLine.HelpCommand.class
        },
        footer = {
            "",
            "Exit codes: 0 done, 1 failed while running, 2 bad input or usage.",
            "Docs: README.md and docs/ in the source tree."
        })
public final class Tailor extends CommandGroup {

    public static void main(String[] args) {
        // The terminal's encoding (stdout.encoding, stderr.encoding) when it can write the output's own signs.
        PrintWriter out = new PrintWriter(System.out, true, outputCharset(System.out.charset()));
        PrintWriter err = new PrintWriter(System.err, true, outputCharset(System.err.charset()));
        int code = run(args, out, err);
        out.flush();
        // System.out keeps its write errors to itself: a full disk or a closed pipe would end "done", exit 0.
        if (code == 0 && (out.checkError() || System.out.checkError())) {
            err.println("tailor: standard output could not be written (a full disk, a closed pipe or a file it"
                    + " cannot write): what it printed is incomplete");
            code = 1;
        }
        System.exit(code);
    }

    /**
     * The encoding to write in: the terminal's ({@code terminal}) when it can write the signs the output
     * uses (×, µ, −, ≤, σ), else UTF-8. Under a C or POSIX locale the terminal's is US-ASCII, which would
     * print each of them as "?", also in JSON, which RFC 8259 has in UTF-8.
     */
    static java.nio.charset.Charset outputCharset(java.nio.charset.Charset terminal) {
        return terminal.newEncoder().canEncode("×µ−≤σ") ? terminal : java.nio.charset.StandardCharsets.UTF_8;
    }

    /** Runs the command line and returns the exit code; output goes to {@code out} and {@code err}. */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        return run(args, out, err, CommandLine.defaultFactory());
    }

    /** {@link #run(String[], PrintWriter, PrintWriter)} with the commands made by {@code factory}. */
    static int run(String[] args, PrintWriter out, PrintWriter err, CommandLine.IFactory factory) {
        CommandLine cli = new CommandLine(new Tailor(), factory);
        cli.setOut(out);
        cli.setErr(err);
        // A mistyped option: say what is wrong and where help is, not the whole usage text.
        cli.setParameterExceptionHandler((e, args2) -> {
            int unknown = CommandGroup.unknownSubcommand(e);
            if (unknown >= 0) {
                return unknown;
            }
            CommandLine commandLine = e.getCommandLine();
            commandLine.getErr().println("tailor: " + usageWords(e, args2));
            CommandLine.UnmatchedArgumentException.printSuggestions(e, commandLine.getErr());
            commandLine.getErr().println("Try '" + commandLine.getCommandSpec().qualifiedName() + " --help'.");
            return CliException.BAD_INPUT;
        });
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            if (e instanceof LabException user) {
                commandLine.getErr().println("tailor: " + user.getMessage());
                return user.exitCode();
            }
            if (e instanceof InterruptedException) {
                return 130; // stopped by Ctrl-C or a signal while waiting: the shell already knows why
            }
            return failed(e, commandLine.getErr());
        });
        try {
            return cli.execute(args);
        } catch (OutOfMemoryError e) { // an Error thrown by a command's own thread passes picocli's handler
            return failed(e, err);
        }
    }

    /**
     * Says on {@code err} why a command failed with {@code e}, not one of the project's own errors, and
     * returns 1: out of memory on one line with what to change; anything else as an internal error, with
     * its stack trace.
     */
    static int failed(Throwable e, PrintWriter err) {
        OutOfMemoryError oom = outOfMemory(e);
        if (oom != null) {
            err.println("tailor: " + outOfMemoryWords(oom));
        } else {
            err.println("tailor: internal error: " + e);
            e.printStackTrace(err);
        }
        err.flush();
        return 1;
    }

    /** The {@link OutOfMemoryError} that {@code e} is or was caused by, or null. */
    static OutOfMemoryError outOfMemory(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof OutOfMemoryError oom) {
                return oom;
            }
        }
        return null;
    }

    /** What a run that ran out of memory says, on one line, with what to change. */
    static String outOfMemoryWords(OutOfMemoryError e) {
        long maxMiB = Runtime.getRuntime().maxMemory() >> 20;
        return "out of memory (" + (e.getMessage() == null ? "OutOfMemoryError" : e.getMessage()) + ", at most "
                + maxMiB + " MiB): the run holds more than fits; try a smaller rate, load or duration, fewer"
                + " --threads, or more memory, e.g. TAILOR_JAVA_OPTS=-Xmx" + Math.max(1, 2 * maxMiB >> 10) + "g";
    }

    /**
     * A value picocli could not convert, worded as the configuration readers word a bad field: the
     * option, the value as written, what was expected ({@code --seeds: abc (expected: a whole number)}),
     * instead of picocli's Java type names; any other usage error as picocli words it.
     */
    static String usageWords(CommandLine.ParameterException e, String[] args) {
        String group = groupWords(e, args);
        if (group != null) {
            return group;
        }
        if (!(e.getCause() instanceof CommandLine.TypeConversionException)
                || !(e.getArgSpec() instanceof CommandLine.Model.OptionSpec option)
                || e.getValue() == null) {
            return e.getMessage();
        }
        Class<?> type = option.auxiliaryTypes()[0];
        String expected;
        if (type.isEnum()) {
            expected = "one of " + String.join(", ", option.completionCandidates());
        } else if (type == int.class || type == Integer.class || type == long.class || type == Long.class) {
            expected = "a whole number";
        } else if (type == double.class || type == Double.class || type == float.class || type == Float.class) {
            expected = "a number";
        } else {
            return e.getMessage();
        }
        String value =
                e.getValue().isBlank() || e.getValue().matches(".*\\s.*") ? '"' + e.getValue() + '"' : e.getValue();
        return option.longestName() + ": " + value + " (expected: " + expected + ")";
    }

    /**
     * An option of an argument group given twice, worded as picocli words any other option given twice
     * ({@code option '--alpha-min' (A) should be specified only once}), instead of its "Error: expected only
     * one match but got" and the whole group's synopsis twice; two options of an exclusive group as picocli
     * words them, without its "Error: ". Null for any other usage error.
     */
    static String groupWords(CommandLine.ParameterException e, String[] args) {
        if (!(e instanceof CommandLine.MaxValuesExceededException
                        || e instanceof CommandLine.MutuallyExclusiveArgsException)
                || e.getMessage() == null
                || !e.getMessage().startsWith("Error: ")) {
            return null;
        }
        CommandLine.Model.CommandSpec spec = e.getCommandLine().getCommandSpec();
        Map<CommandLine.Model.OptionSpec, Integer> given = new LinkedHashMap<>();
        for (String arg : args) {
            if (!arg.startsWith("-")) {
                continue;
            }
            String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
            CommandLine.Model.OptionSpec option = spec.findOption(name);
            if (option == null) {
                option = spec.negatedOptionsMap().get(name);
            }
            if (option != null && option.group() != null) {
                given.merge(option, 1, Integer::sum);
            }
        }
        for (Map.Entry<CommandLine.Model.OptionSpec, Integer> entry : given.entrySet()) {
            if (entry.getValue() > 1) {
                CommandLine.Model.OptionSpec option = entry.getKey();
                String label = option.arity().max() == 0 ? "" : " (" + option.paramLabel() + ")";
                return "option '" + option.longestName() + "'" + label + " should be specified only once";
            }
        }
        if (e instanceof CommandLine.MutuallyExclusiveArgsException) {
            return e.getMessage().substring("Error: ".length());
        }
        return null;
    }

    /** Version from the jar's manifest, or "development" when run from classes. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = Tailor.class.getPackage().getImplementationVersion();
            return new String[] {
                "tailor " + (version == null ? "development build" : version),
                "JVM: ${java.version} (${java.vendor} ${java.vm.name} ${java.vm.version})"
            };
        }
    }
}

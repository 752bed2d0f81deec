package dev.tailor.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;

/**
 * A command that only holds subcommands ({@code tailor}, {@code tailor heart}, {@code tailor storage},
 * {@code tailor nbd}, {@code tailor nbd experiment}, {@code tailor heart snapshot}). Run without one, or
 * with one it does not have, it is a usage error, as picocli has it and as the exit codes say: one line
 * naming the group, what is wrong and the choices, its usage on standard error, exit 2. {@code --help}
 * still prints the usage on standard output and exits 0.
 */
abstract class CommandGroup implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        return usageError(spec.commandLine(), "a subcommand is missing");
    }

    /**
     * Says {@code tailor: GROUP: WHAT (expected: one of CHOICES)} on the group's standard error, then its
     * usage; returns exit code 2.
     */
    static int usageError(CommandLine group, String what) {
        group.getErr().println(line(group, what));
        group.usage(group.getErr());
        return CliException.BAD_INPUT;
    }

    /**
     * When {@code e} is a word a command group does not know where its subcommand goes ({@code tailor heart
     * bogus}), or after its {@code help} ({@code tailor heart help bogus}), says so ({@code tailor: heart:
     * unknown command 'bogus' (expected: one of ...)}), with picocli's suggestion when it is one of the choices
     * ({@link #suggestions}), then the group's usage, and returns 2; otherwise -1, for the caller to word the
     * error.
     */
    static int unknownSubcommand(CommandLine.ParameterException e) {
        CommandLine group = e.getCommandLine();
        CommandLine.ParameterException word = unknownToHelp(e);
        if (!(word instanceof CommandLine.UnmatchedArgumentException unmatched)
                || !(group.getCommand() instanceof CommandGroup)
                || unmatched.getUnmatched().isEmpty()
                || unmatched.getUnmatched().get(0).startsWith("-")) { // an option it does not have
            return -1;
        }
        group.getErr()
                .println(line(
                        group, "unknown command '" + unmatched.getUnmatched().get(0) + "'"));
        List<String> suggestions = suggestions(unmatched);
        if (!suggestions.isEmpty()) {
            group.getErr().println("Did you mean: " + String.join(" or ", suggestions) + "?");
        }
        group.usage(group.getErr());
        return CliException.BAD_INPUT;
    }

    /**
     * picocli's help subcommand's error for a command the group does not have ({@code Unknown subcommand
     * 'bogus'.}, without the choices) as the word the group does not know; any other {@code e} as it is.
     */
    private static CommandLine.ParameterException unknownToHelp(CommandLine.ParameterException e) {
        CommandLine group = e.getCommandLine();
        CommandLine.ParseResult parsed = group.getParseResult();
        if (e instanceof CommandLine.UnmatchedArgumentException
                || e.getValue() == null
                || parsed == null
                || !parsed.hasSubcommand()
                || !parsed.subcommand().commandSpec().helpCommand()
                || group.getSubcommands().containsKey(e.getValue())) {
            return e;
        }
        return new CommandLine.UnmatchedArgumentException(group, List.of(e.getValue()));
    }

    /** {@code tailor: GROUP: WHAT (expected: one of CHOICES)}, the {@link #choices}. */
    private static String line(CommandLine group, String what) {
        String name = qualified(group);
        return "tailor: " + (name.isEmpty() ? "" : name + ": ") + what + " (expected: one of "
                + String.join(", ", choices(group)) + ")";
    }

    /**
     * The group's subcommands a user is offered: each by its own name, not its aliases (an old name still
     * works but is not offered), and none that its usage hides.
     */
    static List<String> choices(CommandLine group) {
        return group.getSubcommands().values().stream()
                .filter(command -> !command.getCommandSpec().usageMessage().hidden())
                .map(CommandLine::getCommandName)
                .distinct()
                .toList();
    }

    /**
     * picocli's suggestions for the unknown word ({@code heart simulate}), kept to the group's {@link #choices}:
     * picocli also compares the word with aliases, and offered {@code snapshot onlineboutique} for {@code bogus}.
     */
    static List<String> suggestions(CommandLine.UnmatchedArgumentException e) {
        CommandLine group = e.getCommandLine();
        List<String> choices = choices(group);
        return e.getSuggestions().stream()
                .map(s -> s.substring(s.lastIndexOf(' ') + 1))
                .filter(choices::contains)
                .distinct()
                .map(s -> qualified(group).isEmpty() ? s : qualified(group) + " " + s)
                .toList();
    }

    /** The group's name as a user types it after {@code tailor} ({@code heart snapshot}); empty for tailor itself. */
    private static String qualified(CommandLine group) {
        return group.getCommandSpec().qualifiedName().replaceFirst("^tailor ?", "");
    }
}

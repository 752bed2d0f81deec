package dev.tailor.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine;

/**
 * A command that only holds subcommands ({@code tailor}, {@code tailor heart}, {@code tailor storage},
 * {@code tailor nbd}, {@code tailor nbd experiment}, {@code tailor heart snapshot}). Run without one it is a usage error, as picocli has
 * it and as the exit codes say: one line naming what is missing and the choices, its usage on standard
 * error, exit 2. {@code --help} still prints the usage on standard output and exits 0.
 */
abstract class CommandGroup implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        CommandLine commandLine = spec.commandLine();
        String group = spec.qualifiedName().replaceFirst("^tailor ?", "");
        commandLine
                .getErr()
                .println("tailor: " + (group.isEmpty() ? "" : group + ": ")
                        + "a subcommand is missing (expected: one of "
                        + String.join(
                                ", ",
                                commandLine.getSubcommands().values().stream()
                                        .map(CommandLine::getCommandName) // not the aliases
                                        .distinct()
                                        .toList())
                        + ")");
        commandLine.usage(commandLine.getErr());
        return CliException.BAD_INPUT;
    }
}

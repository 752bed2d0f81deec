package dev.tailor.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code tailor heart snapshot}: builds snapshots from application data (public datasets or your own). */
@Command(
        name = "snapshot",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        description = "Builds a HEART snapshot from an application's data (TraStrainer layout; the public"
                + " OnlineBoutique dataset by default).",
        subcommands = {DatasetCommand.class, CommandLine.HelpCommand.class})
final class SnapshotCommand extends CommandGroup {}

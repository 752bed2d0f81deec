package dev.tailor.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code tailor nbd}: the NBD server and proxy's commands. */
@Command(
        name = "nbd",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        description = {
            "An NBD server and proxy: serves virtual disks of tenants, in local files or on upstream NBD servers, to"
                    + " qemu, nbdinfo/nbdcopy, fio and the Linux kernel.",
            "",
        },
        subcommands = {
            NbdServeCommand.class,
            NbdTopCommand.class,
            NbdExperimentCommand.class,
            CommandLine.HelpCommand.class
        })
final class NbdCommand extends CommandGroup {}

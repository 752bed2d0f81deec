/**
 * The server's configuration: the records ({@link dev.tailor.nbd.config.NbdConfig}: listen address, TLS,
 * limits, admission, loop, exports), read strictly from YAML ({@link dev.tailor.nbd.config.NbdConfigFiles},
 * its structure checked by {@link dev.tailor.nbd.config.ConfigShape}), sizes as written by people ({@link
 * dev.tailor.nbd.config.ByteSize}), and {@code tailor nbd serve}'s options over a config file ({@link
 * dev.tailor.nbd.config.ServeOptions}).
 *
 * <p>Source: docs/nbd.md, "Configuration" and "Limits"; the protocol's own bounds (string lengths,
 * block sizes) from doc/proto.md of the NetworkBlockDevice project, "Conventions" and "Block size
 * constraints".
 */
package dev.tailor.nbd.config;

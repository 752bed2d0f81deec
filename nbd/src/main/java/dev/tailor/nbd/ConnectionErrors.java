package dev.tailor.nbd;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.io.IOException;

/**
 * The last handler of every connection: logs the failure that closed it. A client that vanished
 * (connection reset) is routine and logged at DEBUG; anything else is a bug here and logged at WARNING.
 */
@ChannelHandler.Sharable
final class ConnectionErrors extends ChannelInboundHandlerAdapter {

    static final ConnectionErrors INSTANCE = new ConnectionErrors();

    private static final System.Logger LOG = System.getLogger(NbdConnectionHandler.class.getName());

    private ConnectionErrors() {}

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        System.Logger.Level level =
                cause instanceof IOException ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING;
        LOG.log(level, () -> ctx.channel() + ": closed after " + cause, cause);
        ctx.close();
    }
}

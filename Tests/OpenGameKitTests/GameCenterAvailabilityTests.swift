import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import Testing

@testable import OpenGameKit

/// A game tells "no Game Center here" from "not reachable now, retry" by the error of `authenticate`, with the codes
/// the seed names: `notSupported` (no server configured, or what answers is not a Game Center server) and
/// `gameUnrecognized` (the server refuses the game: a live test) turn Game Center off; `communicationsFailure` means
/// try again later.
@Suite struct GameCenterAvailabilityTests {
    static func storage() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("availability-\(UUID().uuidString)", isDirectory: true)
    }

    @Test func aDeviceWithNoServerConfiguredHasNoGameCenterAndTriesNoNetwork() async throws {
        let device = GKGameCenter.fromEnvironment(["GAMECENTER_STORAGE": Self.storage().path])
        let heard = Mutex<[GKError.Code]>([])
        device.localPlayer.authenticateHandler = { error in heard.withLock { $0.append((error as? GKError)?.code ?? .unknown) } }
        for credentials in [GKCredentials.stored, .signIn(account: "ann", password: "password-1")] {
            let error = await #expect(throws: GKError.self) { try await device.localPlayer.authenticate(credentials) }
            #expect(error?.code == .notSupported)
            #expect(error?.message.contains("GAMECENTER_URL") == true)
        }
        #expect(heard.withLock { $0 } == [.notSupported, .notSupported])
        #expect(!device.localPlayer.isAuthenticated)
        // The same with an explicit empty list of servers.
        let none = GKGameCenter(servers: [], bundleID: "com.example.tapper", storageDirectory: Self.storage())
        await #expect(throws: GKError(.notSupported, APIClient.noServer.message)) { try await none.localPlayer.authenticate(.stored) }
    }

    /// What answers at the address is not a Game Center server: `notSupported`; a gateway in front of one failing
    /// (HTTP 502, 503, 429 without a Game Center error): `communicationsFailure`, worth retrying.
    @Test(arguments: [
        (404, "text/html", GKError.Code.notSupported), (200, "text/html", .notSupported), (403, "text/plain", .notSupported),
        (502, "text/html", .communicationsFailure), (503, "text/plain", .communicationsFailure), (429, "text/html", .communicationsFailure),
    ])
    func anAnswerThatIsNotAGameCenterServersIsToldApart(status: Int, contentType: String, expected: GKError.Code) async throws {
        let stub = try StubHTTPServer(status: status, contentType: contentType, body: "<html><body>It works!</body></html>")
        defer { stub.close() }
        let device = GKGameCenter(server: stub.url, bundleID: "com.example.tapper", storageDirectory: Self.storage())
        let error = await #expect(throws: GKError.self) {
            try await device.localPlayer.authenticate(.signIn(account: "ann", password: "password-1"))
        }
        #expect(error?.code == expected, "\(error?.message ?? "")")
        #expect(error?.message.contains("HTTP \(status)") == true)
        #expect(stub.requests.lines.withLock { $0 } == ["POST /v1/sessions"])
    }
}

/// An HTTP server on loopback that answers every request with one fixed response, and counts what it was asked.
final class StubHTTPServer: Sendable {
    /// The requests' method and path, in the order they came.
    final class RequestLog: Sendable {
        let lines = Mutex<[String]>([])
    }

    let channel: any Channel
    let requests = RequestLog()

    var url: URL { URL(string: "http://127.0.0.1:\(channel.localAddress!.port!)")! }

    init(status: Int, contentType: String, body: String) throws {
        let requests = self.requests
        channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Responder(status: status, contentType: contentType, body: body, requests: requests))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
    }

    func close() {
        try? channel.close().wait()
    }

    private final class Responder: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let status: Int, contentType: String, body: String
        let requests: RequestLog

        init(status: Int, contentType: String, body: String, requests: RequestLog) {
            (self.status, self.contentType, self.body, self.requests) = (status, contentType, body, requests)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                requests.lines.withLock { $0.append("\(head.method) \(head.uri)") }
            case .body:
                break
            case .end:
                var headers = HTTPHeaders([("Content-Type", contentType), ("Content-Length", String(body.utf8.count))])
                headers.add(name: "Connection", value: "close")
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }
}

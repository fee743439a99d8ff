import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
@testable import GameCenterServer

/// A browser for the in-process server: keeps cookies, submits forms (url-encoded, with the page's CSRF token
/// when asked), and can send from a peer address.
struct PageClient {
    /// An answer as a browser gets it.
    struct Page {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let html: String

        /// The `Set-Cookie` headers.
        var setCookies: [String] { headers[values: .setCookie] }

        /// The `Set-Cookie` header of the cookie `name`, if set.
        func setCookie(_ name: String) -> String? { setCookies.first { $0.hasPrefix("\(name)=") } }

        /// The value of the first hidden `csrf` field.
        var csrf: String? {
            guard let range = html.range(of: #"name="csrf" value=""#) else { return nil }
            return String(html[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    let server: TestServer.Client
    /// The cookies the browser holds, by name.
    var cookies: [String: String] = [:]
    /// The peer address requests come from; nil for none.
    var remoteAddress: SocketAddress?
    /// Headers sent with every request.
    var headers: HTTPFields = [:]

    init(_ server: TestServer.Client) {
        self.server = server
    }

    /// `GET path`.
    mutating func get(_ path: String) async throws -> Page {
        try await send(.get, path, body: nil)
    }

    /// `POST path` with `fields`, url-encoded.
    mutating func post(_ path: String, _ fields: [(String, String)]) async throws -> Page {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let body = fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        return try await send(.post, path, body: body)
    }

    /// Opens `path` and submits its form to `action` with the page's CSRF token and `fields`.
    mutating func submit(_ action: String, on path: String, _ fields: [(String, String)]) async throws -> Page {
        let page = try await get(path)
        return try await post(action, [("csrf", page.csrf ?? "")] + fields)
    }

    private mutating func send(_ method: HTTPRequest.Method, _ path: String, body: String?) async throws -> Page {
        var headers = self.headers
        if !cookies.isEmpty { headers[.cookie] = cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ") }
        if body != nil { headers[.contentType] = "application/x-www-form-urlencoded" }
        let page: Page
        if let remoteAddress {
            let channel = NIOAsyncTestingChannel()
            channel.remoteAddress = remoteAddress
            let context = AppRequestContext(source: .init(channel: channel, logger: Logger(label: "test")))
            let request = Request(
                head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: path, headerFields: headers),
                body: RequestBody(buffer: ByteBuffer(string: body ?? "")))
            let response = try await server.responder.respond(to: request, context: context)
            let collected = CollectedBody()
            try await response.body.write(collected)
            page = Page(status: response.status, headers: response.headers, html: String(buffer: collected.buffer.withLockedValue { $0 }))
        } else {
            let response = try await server.client.executeRequest(
                uri: path, method: method, headers: headers,
                body: body.map { ByteBuffer(string: $0) })
            page = Page(status: response.status, headers: response.headers, html: String(buffer: response.body))
        }
        for header in page.setCookies {
            let pair = header.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0]), value = pair.count > 1 ? String(pair[1]) : ""
            if value.isEmpty || header.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
        return page
    }
}

import Foundation
import OpenGameKit
import Testing

/// `GKLocalPlayer.fetchItemsForIdentityVerificationSignature()` and `fetchIdentityToken()` through the SDK against a real
/// server, checked as a studio's game server would check them by an independent implementation
/// (`Tests/ServerAPI/verify_identity.py`: Python's cryptography for the signature and certificate, PyJWT and the
/// server's key set for the token), on every engine.
@Suite(.serialized, .timeLimit(.minutes(3))) struct IdentityVerificationLiveTests {
    @Test(arguments: LiveServer.engines)
    func theItemsVerifyAgainstTheCertificateAndTheTokenAgainstTheKeySet(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (device, _) = try await Devices.signedUp(server, alias: "Ida")
        let playerID = device.localPlayer.playerID
        let items = try await device.localPlayer.fetchItemsForIdentityVerificationSignature()
        #expect(items.salt.count == 32)
        #expect(abs(Double(items.timestamp) / 1000 - Date().timeIntervalSince1970) < 60)
        let token = try await device.localPlayer.fetchIdentityToken()
        #expect(try Self.verify(server, playerID: playerID, items: items, token: token) == "verified")

        // The checker can fail: another player's id, a changed salt and a changed signature are each refused.
        #expect(try Self.verify(server, playerID: "G:someone-else", items: items, token: token) != "verified")
        var salted = items
        salted.salt[0] ^= 1
        #expect(try Self.verify(server, playerID: playerID, items: salted, token: token) != "verified")
        var forged = items
        forged.signature[forged.signature.count - 1] ^= 1
        #expect(try Self.verify(server, playerID: playerID, items: forged, token: token) != "verified")

        // The completion-handler form gives the same kind of items, each signed anew.
        let second = await withCheckedContinuation { continuation in
            device.localPlayer.fetchItems { url, signature, salt, timestamp, error in
                continuation.resume(returning: error == nil ? (url, signature, salt, timestamp) : nil)
            }
        }
        let again = try #require(second)
        #expect(again.0 == items.publicKeyURL && again.2 != items.salt)
        try await server.stop()
    }

    @Test func theKeysSurviveARestartAndSignedOutDevicesGetNone() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let (device, _) = try await Devices.signedUp(server, alias: "Ivo")
        let before = try await device.localPlayer.fetchItemsForIdentityVerificationSignature()
        try await server.stop()
        try await server.start()
        let after = try await device.localPlayer.fetchItemsForIdentityVerificationSignature()
        #expect(after.publicKeyURL.lastPathComponent == before.publicKeyURL.lastPathComponent, "one key, kept in storage")
        await device.localPlayer.signOut()
        let error = await #expect(throws: GKError.self) { try await device.localPlayer.fetchItemsForIdentityVerificationSignature() }
        #expect(error?.code == .notAuthenticated)
        try await server.stop()
    }

    private static func verify(
        _ server: LiveServer, playerID: String, items: (publicKeyURL: URL, signature: Data, salt: Data, timestamp: UInt64), token: String
    ) throws -> String {
        let json = try JSONSerialization.data(withJSONObject: [
            "publicKeyURL": items.publicKeyURL.absoluteString, "signature": items.signature.base64EncodedString(),
            "salt": items.salt.base64EncodedString(), "timestamp": items.timestamp, "identityToken": token,
        ])
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("ServerAPI/verify_identity.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, server.url.absoluteString, playerID, "com.example.tapper"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        input.fileHandleForWriting.write(json)
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

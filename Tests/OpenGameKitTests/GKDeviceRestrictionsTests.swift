import Foundation
import OpenGameKit
import Testing

/// The device owner's restrictions file: missing restricts nothing, `"voiceChat": false` turns voice off, and a file
/// that cannot be read or understood turns off everything it could (a parental control fails closed).
@Suite struct GKDeviceRestrictionsTests {
    static func file(_ contents: String?) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("restrictions-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("restrictions.json")
        if let contents { try Data(contents.utf8).write(to: file) }
        return file
    }

    @Test func aMissingFileRestrictsNothing() throws {
        let restrictions = GKDeviceRestrictions.read(from: try Self.file(nil))
        #expect(restrictions.allowsVoiceChat && restrictions.problem == nil)
    }

    @Test(arguments: [("{\"voiceChat\": false}", false), ("{\"voiceChat\": true}", true), ("{}", true), ("{\"other\": 1, \"voiceChat\": false}", false)])
    func theFileSaysWhetherVoiceChatIsAllowed(contents: String, allowed: Bool) throws {
        let restrictions = GKDeviceRestrictions.read(from: try Self.file(contents))
        #expect(restrictions.allowsVoiceChat == allowed)
        #expect(restrictions.problem == nil)
    }

    @Test(arguments: ["{\"voiceChat\": 1}", "{\"voiceChat\": \"no\"}", "[false]", "voiceChat=false", ""])
    func aFileThatCannotBeUnderstoodTurnsVoiceOffAndSaysWhy(contents: String) throws {
        let file = try Self.file(contents)
        let restrictions = GKDeviceRestrictions.read(from: file)
        #expect(!restrictions.allowsVoiceChat)
        #expect(restrictions.problem?.contains(file.path) == true, "\(restrictions.problem ?? "no problem named")")
        #expect(restrictions.problem?.contains("true or false") == true)
    }

    @Test func aFileThatCannotBeReadTurnsVoiceOff() throws {
        let file = try Self.file(nil)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        let restrictions = GKDeviceRestrictions.read(from: file)
        #expect(!restrictions.allowsVoiceChat)
        #expect(restrictions.problem?.contains("cannot be read") == true, "\(restrictions.problem ?? "no problem named")")
    }

    @Test func theDefaultFileFollowsXDGConfigHome() {
        let path = GKDeviceRestrictions.defaultFile.path
        #expect(path.hasSuffix("/opengamekit/restrictions.json"))
        if let config = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"] { #expect(path.hasPrefix(config)) }
    }
}

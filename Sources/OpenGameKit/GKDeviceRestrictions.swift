import Foundation

/// What the owner of a device (a parent, an administrator) allows on it, for every game on it: the part of a
/// phone's Screen Time that concerns Game Center.
///
/// It lives in `restrictions.json` in `$XDG_CONFIG_HOME/opengamekit/` (`~/.config/opengamekit/`), a file games never
/// write, and is read afresh each time a game asks, so a change applies to running games:
///
/// ```json
/// { "voiceChat": false }
/// ```
///
/// With `"voiceChat": false` every game's `voiceChat(withName:)` answers nil, and `voiceChat(named:)` throws
/// `parentalControlsBlocked`, for every player on the device. A missing file restricts nothing; a file that cannot
/// be read or understood restricts everything it could restrict, and the error says why.
public struct GKDeviceRestrictions: Sendable, Equatable {
    /// Whether players on this device may talk over voice chat.
    public var allowsVoiceChat: Bool
    /// Why the file restricts everything (it could not be read or understood), or nil.
    public var problem: String?

    /// Restrictions as given.
    public init(allowsVoiceChat: Bool = true) {
        self.allowsVoiceChat = allowsVoiceChat
        self.problem = nil
    }

    /// The file a device's restrictions are read from: `$XDG_CONFIG_HOME/opengamekit/restrictions.json`, or
    /// `~/.config/opengamekit/restrictions.json`.
    public static var defaultFile: URL {
        let base =
            ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config", isDirectory: true)
        return base.appendingPathComponent("opengamekit/restrictions.json")
    }

    /// The restrictions `file` holds: none when it does not exist.
    public static func read(from file: URL) -> GKDeviceRestrictions {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch CocoaError.fileReadNoSuchFile {
            return GKDeviceRestrictions()
        } catch {
            return restrictingEverything(because: "\(file.path) cannot be read (\(error.localizedDescription))")
        }
        guard let settings = try? JSONDecoder().decode(Settings.self, from: data) else {
            return restrictingEverything(because: "\(file.path) is not a JSON object such as {\"voiceChat\": false} (\"voiceChat\" is true or false)")
        }
        return GKDeviceRestrictions(allowsVoiceChat: settings.voiceChat ?? true)
    }

    /// The file's keys; others are ignored.
    private struct Settings: Decodable {
        var voiceChat: Bool?
    }

    private static func restrictingEverything(because problem: String) -> GKDeviceRestrictions {
        var restrictions = GKDeviceRestrictions(allowsVoiceChat: false)
        restrictions.problem = problem
        return restrictions
    }
}

import Foundation
import GameCenterProtocol
import JMESPath
import Yams

/// Apple's rule-based matchmaking in a manifest: `matchmaking.ruleSets` and `matchmaking.queues` written inline with
/// App Store Connect's attribute names, or `matchmaking.appStoreConnect` files holding the JSON:API documents App
/// Store Connect returns for rule sets, rules, teams and queues, read unchanged.
extension ManifestChecker {
    /// A rule set as written, before its rules are compiled.
    private struct RuleSetDraft {
        var node: ManifestNode
        var attributes: [String: ManifestNode]
        var teams: [(node: ManifestNode, attributes: [String: ManifestNode])]
        var rules: [(node: ManifestNode, attributes: [String: ManifestNode])]
    }

    /// A queue as written: its rule sets by reference name.
    private struct QueueDraft {
        var node: ManifestNode
        var referenceName: String
        var ruleSet: (name: String, node: ManifestNode)
        var experimentRuleSet: (name: String, node: ManifestNode)?
        var classicBundleIDs: ManifestNode?
    }

    /// One resource of a JSON:API document.
    private struct Resource {
        var type: String
        var id: String
        var node: ManifestNode
        var attributes: [String: ManifestNode]
        var relationships: [String: ManifestNode]
    }

    static var queueNamePattern: Regex<Substring> { /^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*$/ }

    func matchmakingRules(_ fields: [String: ManifestNode], into settings: inout MatchmakingSettings) throws {
        if let node = fields["compatibleAppVersions"] {
            settings.compatibleAppVersions = try node.sequence().map { group in try group.sequence().map { try $0.string() } }
        }
        var ruleSets: [RuleSetDraft] = []
        var queues: [QueueDraft] = []
        for item in try fields["ruleSets"]?.sequence() ?? [] {
            let attributes = try item.mapping(allowed: ["referenceName", "ruleLanguageVersion", "minPlayers", "maxPlayers", "teams", "rules"])
            let teams = try (attributes["teams"]?.sequence() ?? []).map {
                ($0, try $0.mapping(allowed: ["referenceName", "minPlayers", "maxPlayers"]))
            }
            let rules = try (attributes["rules"]?.sequence() ?? []).map {
                ($0, try $0.mapping(allowed: ["referenceName", "description", "type", "expression", "weight"]))
            }
            ruleSets.append(RuleSetDraft(node: item, attributes: attributes, teams: teams, rules: rules))
        }
        for item in try fields["queues"]?.sequence() ?? [] {
            let attributes = try item.mapping(allowed: ["referenceName", "ruleSet", "experimentRuleSet", "classicMatchmakingBundleIds"])
            let ruleSet = try required(attributes, "ruleSet", in: item)
            let experiment = try attributes["experimentRuleSet"].flatMap { node in node.isNull ? nil : (try node.string(), node) }
            queues.append(
                QueueDraft(
                    node: item, referenceName: try required(attributes, "referenceName", in: item).string(),
                    ruleSet: (try ruleSet.string(), ruleSet), experimentRuleSet: experiment, classicBundleIDs: attributes["classicMatchmakingBundleIds"]))
        }
        for file in try fields["appStoreConnect"]?.sequence() ?? [] {
            try appStoreConnectDocument(file, ruleSets: &ruleSets, queues: &queues)
        }

        let functions = RuleFunctions.table(compatibleAppVersions: settings.compatibleAppVersions)
        for draft in try withoutReferences(ruleSets) {
            let ruleSet = try ruleSet(draft, functions: functions)
            guard settings.ruleSets.updateValue(ruleSet, forKey: ruleSet.referenceName) == nil else {
                throw draft.node.fail("rule set '\(ruleSet.referenceName)' is configured twice; reference names are unique")
            }
        }
        guard queues.count <= MatchmakingQueueDefinition.maximumPerGame else {
            throw (fields["queues"] ?? root).fail("\(queues.count) queues; at most \(MatchmakingQueueDefinition.maximumPerGame) are allowed")
        }
        for draft in queues {
            let queue = try queue(draft, ruleSets: settings.ruleSets)
            guard settings.queues.updateValue(queue, forKey: queue.referenceName) == nil else {
                throw draft.node.fail("queue '\(queue.referenceName)' is configured twice; reference names are unique")
            }
        }
    }

    /// The rule sets, each once: App Store Connect repeats a rule set (its attributes alone) wherever a queue
    /// document includes it; such a copy must agree with the rule set it names.
    private func withoutReferences(_ drafts: [RuleSetDraft]) throws -> [RuleSetDraft] {
        func value(_ draft: RuleSetDraft, _ key: String) -> String? { draft.attributes[key]?.node.scalar?.string }
        var kept: [RuleSetDraft] = []
        for draft in drafts {
            guard let name = value(draft, "referenceName"), let index = kept.firstIndex(where: { value($0, "referenceName") == name }) else {
                kept.append(draft)
                continue
            }
            let other = kept[index]
            let full = [other, draft].filter { !$0.rules.isEmpty || !$0.teams.isEmpty }
            guard full.count < 2 else { throw draft.node.fail("rule set '\(name)' is configured twice; reference names are unique") }
            for key in ["ruleLanguageVersion", "minPlayers", "maxPlayers"] where value(draft, key) != value(other, key) {
                throw draft.node.fail("rule set '\(name)' has \(key) \(value(draft, key) ?? "unset") here but \(value(other, key) ?? "unset") elsewhere")
            }
            if !draft.rules.isEmpty || !draft.teams.isEmpty { kept[index] = draft }
        }
        return kept
    }

    private func queue(_ draft: QueueDraft, ruleSets: [String: MatchmakingRuleSet]) throws -> MatchmakingQueueDefinition {
        let name = draft.referenceName
        guard (1...255).contains(name.count), name.wholeMatch(of: Self.queueNamePattern) != nil else {
            throw draft.node.fail(
                "queue name '\(name)' must be 1 to 255 letters, digits, '-' and '.', in reverse-DNS form such as com.example.game.Ranked")
        }
        guard ruleSets[draft.ruleSet.name] != nil else {
            throw draft.ruleSet.node.fail("no rule set is named '\(draft.ruleSet.name)'; known: \(ruleSets.keys.sorted().joined(separator: ", "))")
        }
        if let experiment = draft.experimentRuleSet {
            guard ruleSets[experiment.name] != nil else { throw experiment.node.fail("no rule set is named '\(experiment.name)'") }
            guard experiment.name != draft.ruleSet.name else { throw experiment.node.fail("the experiment must be another rule set than the queue's own") }
        }
        let bundleIDs = try (draft.classicBundleIDs.flatMap { $0.isNull ? nil : $0 }?.sequence() ?? []).map { node in
            let id = try node.string()
            guard id.wholeMatch(of: Self.bundleIDPattern) != nil else { throw node.fail("'\(id)' is not a reverse-DNS bundle id") }
            return id
        }
        return MatchmakingQueueDefinition(
            referenceName: name, ruleSet: draft.ruleSet.name, experimentRuleSet: draft.experimentRuleSet?.name, classicMatchmakingBundleIds: bundleIDs)
    }

    private func ruleSet(_ draft: RuleSetDraft, functions: JMESPathFunctions) throws -> MatchmakingRuleSet {
        let fields = draft.attributes
        let name = try identifier(try required(fields, "referenceName", in: draft.node))
        let version = try required(fields, "ruleLanguageVersion", in: draft.node)
        guard try version.int() == 1 else { throw version.fail("must be 1, the only rule language version") }
        func players(_ key: String, _ fields: [String: ManifestNode], in node: ManifestNode, range: ClosedRange<Int>) throws -> Int {
            let field = try required(fields, key, in: node)
            let value = try field.int()
            guard range.contains(value) else { throw field.fail("must be a whole number from \(range.lowerBound) to \(range.upperBound)") }
            return value
        }
        let sizes = Limits.matchPlayers
        let (minPlayers, maxPlayers) = (
            try players("minPlayers", fields, in: draft.node, range: sizes), try players("maxPlayers", fields, in: draft.node, range: sizes)
        )
        guard minPlayers <= maxPlayers else { throw draft.node.fail("minPlayers \(minPlayers) is more than maxPlayers \(maxPlayers)") }

        guard draft.teams.count <= MatchmakingRuleSet.maximumTeams else {
            throw draft.node.fail("\(draft.teams.count) teams; a rule set has at most \(MatchmakingRuleSet.maximumTeams)")
        }
        var teams: [MatchmakingTeam] = []
        for (node, fields) in draft.teams {
            let team = MatchmakingTeam(
                name: try identifier(try required(fields, "referenceName", in: node)),
                minPlayers: try players("minPlayers", fields, in: node, range: 0...sizes.upperBound),
                maxPlayers: try players("maxPlayers", fields, in: node, range: 1...sizes.upperBound))
            guard team.minPlayers <= team.maxPlayers else { throw node.fail("minPlayers \(team.minPlayers) is more than maxPlayers \(team.maxPlayers)") }
            guard !teams.contains(where: { $0.name == team.name }) else { throw node.fail("team '\(team.name)' is named twice") }
            teams.append(team)
        }
        if teams.count == 1 { throw draft.node.fail("one team; a rule set has no teams or at least two") }
        if !teams.isEmpty {
            let (least, most) = (teams.map(\.minPlayers).reduce(0, +), teams.map(\.maxPlayers).reduce(0, +))
            guard least <= maxPlayers, most >= minPlayers else {
                throw draft.node.fail(
                    "the teams hold \(least) to \(most) players, which never fits the rule set's \(minPlayers) to \(maxPlayers)")
            }
        }

        guard draft.rules.count <= MatchmakingRuleSet.maximumRules else {
            throw draft.node.fail("\(draft.rules.count) rules; a rule set has at most \(MatchmakingRuleSet.maximumRules)")
        }
        var rules: [MatchmakingRule] = []
        for (node, fields) in draft.rules {
            let rule = try rule(node, fields, functions: functions)
            guard !rules.contains(where: { $0.referenceName == rule.referenceName }) else {
                throw node.fail("rule '\(rule.referenceName)' is named twice in rule set '\(name)'")
            }
            if rule.type == .team, teams.isEmpty { throw node.fail("a TEAM rule needs teams in its rule set; '\(name)' has none") }
            rules.append(rule)
        }
        return MatchmakingRuleSet(
            referenceName: name, ruleLanguageVersion: 1, minPlayers: minPlayers, maxPlayers: maxPlayers, teams: teams, rules: rules)
    }

    private func rule(_ node: ManifestNode, _ fields: [String: ManifestNode], functions: JMESPathFunctions) throws -> MatchmakingRule {
        let name = try identifier(try required(fields, "referenceName", in: node))
        let description = try required(fields, "description", in: node).string()
        guard description.count <= 1000 else { throw fields["description"]!.fail("must be at most 1000 characters") }
        let typeNode = try required(fields, "type", in: node)
        guard let type = MatchmakingRuleType(rawValue: try typeNode.string()) else {
            throw typeNode.fail("must be one of \(MatchmakingRuleType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let expressionNode = try required(fields, "expression", in: node)
        let source = try expressionNode.string()
        guard (1...MatchmakingRuleSet.maximumExpressionLength).contains(source.count) else {
            throw expressionNode.fail("must be 1 to \(MatchmakingRuleSet.maximumExpressionLength) characters")
        }
        let expression: JMESPathExpression
        do {
            expression = try JMESPathExpression(compiling: source, functions: functions)
        } catch {
            throw expressionNode.fail("is not a valid rule expression: \(error)")
        }
        var weight: Double?
        if let weightNode = fields["weight"], !weightNode.isNull {
            guard type == .distance || type == .match else { throw weightNode.fail("only DISTANCE and MATCH rules have a weight") }
            let value = try weightNode.double()
            guard (0...1000).contains(value) else { throw weightNode.fail("must be a number from 0 to 1000") }
            weight = value
        }
        return MatchmakingRule(referenceName: name, description: description, type: type, expression: expression, weight: weight)
    }

    // MARK: App Store Connect documents

    /// Reads one file of App Store Connect JSON:API documents (one document, or a list of them): every rule set,
    /// rule, team and queue in `data` and `included`, joined by their relationships.
    private func appStoreConnectDocument(_ pathNode: ManifestNode, ruleSets: inout [RuleSetDraft], queues: inout [QueueDraft]) throws {
        let relative = try pathNode.string()
        let url = URL(fileURLWithPath: relative, relativeTo: baseDirectory)
        guard let data = FileManager.default.contents(atPath: url.path), let text = String(data: data, encoding: .utf8) else {
            throw pathNode.fail("cannot read '\(relative)' (relative to the manifest's folder) as UTF-8 text")
        }
        let composed: Node?
        do {
            composed = try Yams.compose(yaml: text)
        } catch {
            throw pathNode.fail("'\(relative)' is not valid JSON: \(error)")
        }
        guard let composed else { throw pathNode.fail("'\(relative)' is empty") }
        let root = ManifestNode(node: composed, path: "", file: url.path)
        let documents = root.node.sequence != nil ? try root.sequence() : [root]

        var resources: [Resource] = []
        for document in documents {
            let fields = try document.mapping(allowed: ["data", "included", "links", "meta"])
            var items: [ManifestNode] = []
            if let data = fields["data"] { items += data.node.sequence != nil ? try data.sequence() : [data] }
            items += try fields["included"]?.sequence() ?? []
            for item in items {
                let resource = try item.mapping(allowed: ["type", "id", "attributes", "relationships", "links", "meta"])
                let type = try required(resource, "type", in: item).string()
                let id = try required(resource, "id", in: item).string()
                guard !resources.contains(where: { $0.type == type && $0.id == id }) else { continue }
                let attributes = try resource["attributes"]?.anyMapping() ?? []
                let relationships = try resource["relationships"]?.anyMapping() ?? []
                resources.append(
                    Resource(
                        type: type, id: id, node: item, attributes: Dictionary(attributes, uniquingKeysWith: { a, _ in a }),
                        relationships: Dictionary(relationships, uniquingKeysWith: { a, _ in a })))
            }
        }
        /// The ids a relationship names (`data` is one identifier, a list of them, or null).
        func related(_ relationships: [String: ManifestNode], _ key: String) throws -> [(id: String, node: ManifestNode)] {
            guard let relationship = relationships[key] else { return [] }
            let fields = try relationship.mapping(allowed: ["data", "links", "meta"])
            guard let data = fields["data"], !data.isNull else { return [] }
            let identifiers = data.node.sequence != nil ? try data.sequence() : [data]
            return try identifiers.map { identifier in
                let fields = try identifier.mapping(allowed: ["type", "id"])
                return (try required(fields, "id", in: identifier).string(), identifier)
            }
        }
        func attributes(_ resource: Resource, allowed: Set<String>) throws -> [String: ManifestNode] {
            for (key, value) in resource.attributes where !allowed.contains(key) {
                throw value.fail("unknown attribute of \(resource.type); allowed: \(allowed.sorted().joined(separator: ", "))")
            }
            return resource.attributes
        }

        let setResources = resources.filter { $0.type == "gameCenterMatchmakingRuleSets" }
        var nameOfSet: [String: String] = [:]
        var drafts: [RuleSetDraft] = []
        for resource in setResources {
            let fields = try attributes(resource, allowed: ["referenceName", "ruleLanguageVersion", "minPlayers", "maxPlayers"])
            nameOfSet[resource.id] = try required(fields, "referenceName", in: resource.node).string()
            drafts.append(RuleSetDraft(node: resource.node, attributes: fields, teams: [], rules: []))
        }
        func owner(of resource: Resource, listedAs key: String) throws -> Int {
            let declared = try related(resource.relationships, "ruleSet").first?.id
            let listing = try setResources.indices.filter { index in
                try related(setResources[index].relationships, key).contains { $0.id == resource.id }
            }
            if let declared, let index = setResources.firstIndex(where: { $0.id == declared }) { return index }
            if let index = listing.first { return index }
            throw resource.node.fail("belongs to no rule set in this file (its relationships.ruleSet names none, and no rule set lists it)")
        }
        for resource in resources where resource.type == "gameCenterMatchmakingTeams" {
            let fields = try attributes(resource, allowed: ["referenceName", "minPlayers", "maxPlayers"])
            drafts[try owner(of: resource, listedAs: "teams")].teams.append((resource.node, fields))
        }
        for resource in resources where resource.type == "gameCenterMatchmakingRules" {
            let fields = try attributes(resource, allowed: ["referenceName", "description", "type", "expression", "weight"])
            drafts[try owner(of: resource, listedAs: "rules")].rules.append((resource.node, fields))
        }
        ruleSets += drafts
        for resource in resources where resource.type == "gameCenterMatchmakingQueues" {
            let fields = try attributes(resource, allowed: ["referenceName", "classicMatchmakingBundleIds"])
            func ruleSetName(_ key: String) throws -> (String, ManifestNode)? {
                guard let identifier = try related(resource.relationships, key).first else { return nil }
                guard let name = nameOfSet[identifier.id] else {
                    throw identifier.node.fail("rule set id '\(identifier.id)' is not in this file; export the queue with include=ruleSet")
                }
                return (name, identifier.node)
            }
            guard let ruleSet = try ruleSetName("ruleSet") else { throw resource.node.fail("a queue needs relationships.ruleSet") }
            queues.append(
                QueueDraft(
                    node: resource.node, referenceName: try required(fields, "referenceName", in: resource.node).string(), ruleSet: ruleSet,
                    experimentRuleSet: try ruleSetName("experimentRuleSet"), classicBundleIDs: fields["classicMatchmakingBundleIds"]))
        }
    }
}
